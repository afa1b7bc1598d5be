#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/search/asha.hpp"
#include "runtime/search/pbt.hpp"
#include "runtime/search/replay.hpp"
#include "test/support/contract_check.hpp"
#include "test/runtime/search/test_search_util.hpp"

using namespace cerebro;
using namespace cerebro::test;
using nlohmann::json;

namespace {

std::vector<SearchDecision> sorted(std::vector<SearchDecision> decisions) {
  std::sort(decisions.begin(), decisions.end(), [](const SearchDecision& a, const SearchDecision& b) {
    return std::tie(a.config, a.epoch) < std::tie(b.config, b.epoch);
  });
  return decisions;
}

// Replays `original` on another cluster shape and checks that every config
// ends the same way with the same metrics after every epoch.
void check_replay(const SearchSimulation& original, const std::vector<ConfigParams>& configs, int32_t epochs,
                  uint64_t seed) {
  SimCluster other;
  other.workers = 4;
  other.partitions = 3;
  other.embedded = false;
  other.unit_failure_p = 0.05;
  other.max_unit_retries = 6;  // failures delay units; none may fail its config here
  other.worker_removals = 2;
  other.copy_delay = 0.9;
  SearchSimulation replay(other, configs, epochs, std::make_unique<ReplayDecisions>(original.decisions()), seed + 99,
                          std::make_unique<ReplayPolicy>(original.visit_order()));
  BOOST_TEST_REQUIRE(replay.run());
  Status s = replay.check();
  BOOST_TEST(s.ok(), s.message());
  BOOST_TEST((sorted(replay.decisions()) == sorted(original.decisions())));
  BOOST_TEST(replay.copies().size() == original.copies().size());
  for (const auto& c : configs) {
    BOOST_TEST_CONTEXT("config " << c.id) {
      BOOST_TEST(replay.control().outcomes().at(c.id).status == original.control().outcomes().at(c.id).status);
      BOOST_REQUIRE_EQUAL(replay.epochs_completed(c.id), original.epochs_completed(c.id));
      for (int32_t e = 0; e < original.epochs_completed(c.id); ++e) {
        BOOST_TEST(replay.accuracy(c.id, e) == original.accuracy(c.id, e));
        BOOST_TEST((replay.epoch_end_state(c.id, e) == original.epoch_end_state(c.id, e)));
      }
    }
  }
}

SimCluster original_cluster() {
  SimCluster cluster;
  cluster.workers = 3;
  cluster.partitions = 3;
  return cluster;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replay)

BOOST_AUTO_TEST_CASE(decisions_round_trip_through_json) {
  auto stop = SearchDecision::stop(3, 2, "not in the top 1/3");
  auto exploit = SearchDecision::exploit(4, 1, 0, 1, json{{"lr", 0.0012}, {"model", "mlp"}}, "bottom");
  auto go_on = SearchDecision::continue_training(1, 0);
  for (const auto& d : {stop, exploit, go_on}) BOOST_TEST((search_decision_from_json(to_json(d)).value() == d));
  BOOST_TEST(to_json(stop).dump() == R"({"config":3,"decision":"stop","epoch":2,"reason":"not in the top 1/3"})");
  BOOST_TEST(to_string(exploit) == "config 4 epoch 1: exploit config 0 (its state after epoch 1) (bottom)");
  auto paused = search_decision_from_json(json::parse(R"({"config":1,"epoch":0,"decision":"pause","reason":""})"));
  BOOST_TEST(paused.status().is_invalid_argument());
  BOOST_TEST(paused.error().find("'decision' must be") != std::string::npos, paused.error());
  auto no_epoch = search_decision_from_json(json::parse(R"({"config":1,"decision":"stop","reason":""})"));
  BOOST_TEST(no_epoch.status().is_invalid_argument());
  BOOST_TEST(no_epoch.error().find("missing field 'epoch'") != std::string::npos, no_epoch.error());
}

BOOST_AUTO_TEST_CASE(decision_kinds_round_trip_through_their_words) {
  using Kind = SearchDecision::Kind;
  for (auto kind : {Kind::continue_training, Kind::stop, Kind::exploit})
    BOOST_TEST((parse_search_decision_kind(to_string(kind)) == kind));
  BOOST_TEST(to_string(Kind::continue_training) == "continue");
  BOOST_TEST(!parse_search_decision_kind("continue_training").has_value());
  BOOST_TEST(!parse_search_decision_kind("pause").has_value());
  // A decision that is not a string is refused like an unknown word.
  BOOST_TEST(search_decision_from_json(json::parse(R"({"config":1,"epoch":0,"decision":3,"reason":""})"))
                 .status()
                 .is_invalid_argument());
}

BOOST_AUTO_TEST_CASE(an_exploit_waits_until_its_source_state_exists) {
  const json params = {{"lr", 0.1}};
  ReplayDecisions replay({SearchDecision::continue_training(0, 0), SearchDecision::continue_training(0, 1),
                          SearchDecision::exploit(1, 0, 0, 1, params, "copy")});
  BOOST_TEST(replay.decide(outcome(1, 0, 0.1)).empty());  // config 0 has not ended epoch 1 yet
  BOOST_TEST(replay.decide(outcome(0, 0, 0.5)).size() == 1u);
  auto released = replay.decide(outcome(0, 1, 0.5));
  BOOST_REQUIRE_EQUAL(released.size(), 2u);
  BOOST_TEST((released[1].kind == SearchDecision::Kind::exploit));
  BOOST_TEST(released[1].config == 1);
  // Unrecorded epochs continue; a source that leaves stops its waiting copier.
  BOOST_TEST((replay.decide(outcome(5, 0, 0.5))[0].kind == SearchDecision::Kind::continue_training));
  ReplayDecisions lost({SearchDecision::exploit(1, 0, 0, 1, params, "copy")});
  BOOST_TEST(lost.decide(outcome(1, 0, 0.1)).empty());
  auto stopped = lost.on_config_ended(0);
  BOOST_REQUIRE_EQUAL(stopped.size(), 1u);
  BOOST_TEST((stopped[0].kind == SearchDecision::Kind::stop));
  auto twice = ReplayDecisions::create({SearchDecision::continue_training(0, 0), SearchDecision::stop(0, 0, "x")});
  BOOST_TEST(twice.status().is_invalid_argument());
  BOOST_TEST(twice.error().find("two decisions recorded for config 0 after epoch 0") != std::string::npos);
  CEREBRO_CHECK_CONTRACT(ReplayDecisions({SearchDecision::stop(0, 0, "x"), SearchDecision::stop(0, 0, "y")}),
                         "ReplayDecisions: replay: two decisions");
}

BOOST_AUTO_TEST_CASE(a_replayed_asha_run_ends_every_config_the_same_way) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto configs = quality_configs(12, seed);
    SearchSimulation original(original_cluster(), configs, 9, std::make_unique<AshaProcedure>(AshaOptions{9, 1, 3}),
                              seed);
    BOOST_TEST_REQUIRE(original.run());
    check_replay(original, configs, 9, seed);
  }
}

BOOST_AUTO_TEST_CASE(a_replayed_pbt_run_makes_the_same_copies) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto configs = quality_configs(6, seed);
    PbtOptions options;
    options.epochs = 5;
    options.exploit_fraction = 0.5;
    options.ranges = {{"lr", PerturbRange{1e-5, 1e-1, false}}, {"quality", PerturbRange{0.1, 1.0, false}}};
    options.seed = seed;
    SearchSimulation original(original_cluster(), configs, options.epochs,
                              std::make_unique<PbtProcedure>(options, configs), seed);
    BOOST_TEST_REQUIRE(original.run());
    BOOST_TEST(!original.copies().empty());
    check_replay(original, configs, options.epochs, seed);
  }
}

BOOST_AUTO_TEST_SUITE_END()
