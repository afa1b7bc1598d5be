// Scheduling policies (randomized, replay), the policy factory and the
// fixed-epochs search procedure.
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>

#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/base/status.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_SUITE(policies)

BOOST_AUTO_TEST_CASE(randomized_picks_every_eligible_unit_about_equally) {
  MopBook book(4);
  book.add_worker(0, {0, 1, 2, 3});
  book.add_worker(1, {0, 2});
  for (ConfigId c = 0; c < 5; ++c) book.add_config(c, 1);
  book.start(1, Unit{4, 2, 0});  // config 4 busy: its units are not eligible for worker 0

  RandomizedPolicy policy(42);
  BOOST_TEST(policy.name() == "randomized");
  std::vector<Unit> eligible = book.eligible_units(0);
  BOOST_REQUIRE(eligible.size() == 16u);
  std::map<Unit, int> picks;
  const int draws = 16000;  // 1000 expected per unit, standard deviation ~31
  for (int i = 0; i < draws; ++i) {
    std::optional<Unit> u = policy.choose(0, book);
    BOOST_REQUIRE(u.has_value());
    ++picks[*u];
  }
  BOOST_TEST(picks.size() == eligible.size());
  for (const Unit& u : eligible) {
    BOOST_TEST_CONTEXT(to_string(u)) {
      BOOST_TEST(picks[u] > 850);
      BOOST_TEST(picks[u] < 1150);
    }
  }
  // Worker 1 is busy: nothing to choose.
  BOOST_TEST(!policy.choose(1, book).has_value());
}

BOOST_AUTO_TEST_CASE(randomized_is_reproducible_from_its_seed) {
  MopBook book(3);
  book.add_worker(0, {0, 1, 2});
  for (ConfigId c = 0; c < 4; ++c) book.add_config(c, 1);
  auto draw = [&](uint64_t seed) {
    std::unique_ptr<SchedulingPolicy> policy = make_policy("randomized", seed).value();
    std::vector<Unit> out;
    for (int i = 0; i < 50; ++i) out.push_back(*policy->choose(0, book));
    return out;
  };
  BOOST_TEST(draw(7) == draw(7), boost::test_tools::per_element());
  BOOST_TEST((draw(7) != draw(8)));
}

BOOST_AUTO_TEST_CASE(make_policy_rejects_unknown_names) {
  BOOST_TEST(make_policy("randomized", 1).value()->name() == "randomized");
  auto fifo = make_policy("fifo", 1);
  BOOST_TEST(fifo.status().is_invalid_argument());
  BOOST_TEST(fifo.error().find("'fifo'") != std::string::npos, fifo.error());
  BOOST_TEST(fifo.error().find("randomized") != std::string::npos, fifo.error());
  BOOST_TEST(make_policy("", 1).status().is_invalid_argument());
}

BOOST_AUTO_TEST_CASE(replay_follows_the_logged_order_on_one_worker) {
  MopBook book(3);
  book.add_worker(0, {0, 1, 2});
  book.add_config(5, 2);
  ReplayPolicy policy({{5, {{2, 0, 1}, {1, 2, 0}}}});
  BOOST_TEST(policy.name() == "replay");
  std::vector<PartitionId> visited;
  while (!book.all_done()) {
    std::optional<Unit> u = policy.choose(0, book);
    BOOST_REQUIRE(u.has_value());
    book.start(0, *u);
    visited.push_back(u->partition);
    if (book.complete(0, *u)) book.advance(5);
  }
  BOOST_TEST(visited == (std::vector<PartitionId>{2, 0, 1, 1, 2, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(replay_waits_for_the_holder_of_the_next_logged_partition) {
  MopBook book(2);
  book.add_worker(0, {0});
  book.add_worker(1, {1});
  book.add_config(1, 1);
  book.add_config(2, 1);
  ReplayPolicy policy({{1, {{1, 0}}}});  // config 2 is not logged
  // Worker 0 holds only partition 0; config 1 must visit 1 first, so worker 0
  // gets unlogged config 2 instead.
  BOOST_TEST((policy.choose(0, book) == Unit{2, 0, 0}));
  BOOST_TEST((policy.choose(1, book) == Unit{1, 1, 0}));
  book.start(1, Unit{1, 1, 0});
  book.start(0, Unit{2, 0, 0});
  book.complete(0, Unit{2, 0, 0});
  // Config 1 is busy and config 2 wants partition 1: worker 0 stays idle.
  BOOST_TEST(!policy.choose(0, book).has_value());
  // After a failed attempt the same logged unit is next again.
  book.requeue(1, Unit{1, 1, 0});
  BOOST_TEST(!policy.choose(0, book).has_value());
  BOOST_TEST((policy.choose(1, book) == Unit{1, 1, 0}));
}

BOOST_AUTO_TEST_CASE(replay_rejects_malformed_orders) {
  auto repeated = ReplayPolicy::create({{1, {{0, 1, 0}}}});
  BOOST_TEST(repeated.status().is_invalid_argument());
  BOOST_TEST(repeated.error().find("repeated partition 0") != std::string::npos, repeated.error());
  BOOST_TEST(ReplayPolicy::create({{1, {{0}, {-1}}}}).status().is_invalid_argument());
  BOOST_TEST(ReplayPolicy::create({{1, {{0, 1}}}}).ok());
  // The constructor takes an order that passes the check: another is the caller's bug.
  CEREBRO_CHECK_CONTRACT(ReplayPolicy({{1, {{0}, {-1}}}}), "negative partition -1");
}

BOOST_AUTO_TEST_CASE(fixed_epochs_procedure_always_continues) {
  FixedEpochsProcedure procedure;
  for (int32_t e = 0; e < 5; ++e) {
    BOOST_TEST((procedure.on_epoch_end(EpochOutcome{3, e, 9.0, 9.0, 0.0}) == EpochDecision::continue_training));
  }
}

BOOST_AUTO_TEST_SUITE_END()
