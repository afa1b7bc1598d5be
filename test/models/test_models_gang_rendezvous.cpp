// A gang's ranks meet through the rendezvous board by messages
// (GangSession::open with a RendezvousCall), with no TCPStore: the same
// training as through TCPStore, the same state on both ranks, and a peer
// that never arrives fails the attempt. The call here reaches the board
// under a mutex; in a run it is a CAF request to the scheduler's board.
#include <boost/test/unit_test.hpp>

#include <future>
#include <mutex>

#include "models/gang_trainer.hpp"
#include "runtime/cluster/rendezvous_board.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

struct SharedBoard {
  std::mutex mutex;
  RendezvousBoard board;
  int64_t calls = 0;
  RendezvousCall call() {
    return [this](const rendezvous_request& r) -> Result<rendezvous_reply> {
      std::lock_guard<std::mutex> lock(mutex);
      ++calls;
      return board.handle(r);
    };
  }
};

UnitInput input_of(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                   const datasets::Dataset& partition, uint64_t seed) {
  UnitInput in;
  in.params = &params;
  in.shape = shape;
  in.state = &state;
  in.partition = &partition;
  in.seed = seed;
  return in;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gang_rendezvous)

BOOST_AUTO_TEST_CASE(ranks_meet_through_the_board_and_hold_one_state) {
  Data data = make_data({20}, 128);
  auto params = nlohmann::json::parse(R"({"model": "mlp", "hidden": [16], "batch_size": 32, "lr": 0.01})");
  auto state = initial_state(params, data.shape, data.p0, 7);
  BOOST_TEST_REQUIRE(state.ok(), state.error());
  SharedBoard board;
  auto rank = [&](int r, const datasets::Dataset& partition, uint64_t seed) -> Result<GangUnitOutput> {
    auto session = GangSession::open(board.call(), 41, "127.0.0.1", r, 2, 30);
    if (!session.ok()) return session.status();
    return train_gang_unit(**session, input_of(params, data.shape, *state, partition, seed));
  };
  auto second = std::async(std::launch::async, [&] { return rank(1, data.p1, 2); });
  auto first = rank(0, data.p0, 1);
  auto other = second.get();
  BOOST_TEST_REQUIRE(first.ok(), first.error());
  BOOST_TEST_REQUIRE(other.ok(), other.error());
  BOOST_TEST(board.calls > 0);
  BOOST_TEST(first->steps == 8);  // 128 examples in shares of 16
  BOOST_TEST(first->rank_examples == 128);
  BOOST_TEST(other->rank_examples == 128);
  BOOST_TEST(first->unit.examples == 256);
  BOOST_TEST(decode_state(first->unit.state).tensors.size() == decode_state(other->unit.state).tensors.size());
  for (const auto& [key, tensor] : decode_state(first->unit.state).tensors) {
    if (key.rfind("model/", 0) != 0) continue;
    BOOST_TEST(torch::equal(tensor, decode_state(other->unit.state).tensors.at(key)), key);
  }
  board.board.close(41);
  BOOST_TEST(board.board.open_scopes() == 0u);
}

BOOST_AUTO_TEST_CASE(a_peer_that_never_arrives_fails_the_attempt) {
  Data data = make_data({20}, 64);
  auto params = nlohmann::json::parse(R"({"model": "mlp", "hidden": [8], "batch_size": 16})");
  auto state = initial_state(params, data.shape, data.p0, 7);
  BOOST_TEST_REQUIRE(state.ok(), state.error());
  SharedBoard board;
  auto session = GangSession::open(board.call(), 5, "127.0.0.1", 0, 2, 1);
  BOOST_TEST_REQUIRE(session.ok(), session.error());
  auto out = train_gang_unit(**session, input_of(params, data.shape, *state, data.p0, 1));
  BOOST_TEST(!out.ok());
}

BOOST_AUTO_TEST_CASE(bad_ranks_and_a_missing_board_are_errors) {
  SharedBoard board;
  BOOST_TEST(!GangSession::open(board.call(), 1, "127.0.0.1", 2, 2, 1).ok());
  BOOST_TEST(!GangSession::open(board.call(), 1, "127.0.0.1", 0, 1, 1).ok());
  BOOST_TEST(!GangSession::open(nullptr, 1, "127.0.0.1", 0, 2, 1).ok());
  auto session = GangSession::open(board.call(), 1, "127.0.0.1", 0, 2, 1);
  BOOST_TEST_REQUIRE(session.ok(), session.error());
  BOOST_TEST((*session)->port() == 0);  // no rendezvous port at all
}

BOOST_AUTO_TEST_CASE(the_local_allreduce_probe_measures_a_cost) {
  Data data = make_data({20}, 16);
  auto params = nlohmann::json::parse(R"({"model": "mlp", "hidden": [8]})");
  auto seconds = measure_allreduce_local(params, data.shape, 2, 3);
  BOOST_TEST_REQUIRE(seconds.ok(), seconds.error());
  BOOST_TEST(*seconds > 0);
  BOOST_TEST(!measure_allreduce_local(params, data.shape, 1, 3).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
