// Cost priors (runtime/scheduling/cost_prior.hpp): the critical_path policy
// ranks configs by their priors before any unit is measured, measured times
// replace the priors, and CostPriors probes each architecture once.
#include <boost/test/unit_test.hpp>

#include <map>

#include "runtime/scheduling/cost_prior.hpp"
#include "runtime/scheduling/critical_path_policy.hpp"
#include "runtime/scheduling/mop_book.hpp"

using namespace cerebro;

namespace {

// Two workers holding both partitions; configs 0..3, two epochs each.
MopBook two_workers_four_configs() {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_worker(1, {0, 1});
  for (ConfigId c = 0; c < 4; ++c) book.add_config(c, 2);
  return book;
}

// A probe that answers from a table by model name and counts its calls.
class TableProbe : public ModelCostProbe {
 public:
  std::map<std::string, double> seconds;
  int calls = 0;
  Result<double> seconds_per_example(const nlohmann::json& params) override {
    ++calls;
    auto it = seconds.find(params.value("model", ""));
    if (it == seconds.end()) return Status::error("no such model in the table");
    return it->second;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(cost_priors)

// Config 3 costs 10x the others. Without priors the policy knows nothing and
// measures configs in order (config 0 first); with priors the heavy config,
// whose remaining chain is the longest, starts first, before any unit ran.
BOOST_AUTO_TEST_CASE(the_heavy_config_starts_first_before_any_unit_is_measured) {
  {
    MopBook book = two_workers_four_configs();
    CriticalPathPolicy blind(7);
    std::optional<Unit> first = blind.choose(0, book);
    BOOST_REQUIRE(first.has_value());
    BOOST_TEST(first->config == 0);
  }
  MopBook book = two_workers_four_configs();
  CriticalPathPolicy policy(7);
  CostPriors priors;
  for (ConfigId c = 0; c < 3; ++c) priors.set(c, 1e-4);
  priors.set(3, 1e-3);
  priors.apply_to(policy);
  std::optional<Unit> first = policy.choose(0, book);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->config == 3);
  BOOST_TEST(!policy.model().knows_config(3));
  // The prior is what the policy believes the config costs.
  BOOST_TEST(policy.model().cost(3) / policy.model().cost(0) == 10.0, boost::test_tools::tolerance(1e-9));
  book.start(0, *first);
  std::optional<Unit> second = policy.choose(1, book);
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(second->config != 3);  // isolation: the heavy config runs on worker 0
}

// On workers that hold every partition the policy runs the idle config with
// the longest remaining chain: config 1 (5x) after config 3 (10x), where the
// critical threshold alone would take config 0 (unmeasured, first in id
// order) since config 1's chain is under 80% of the floor. Worker 1 holding
// one partition only keeps the threshold rules.
BOOST_AUTO_TEST_CASE(full_holders_run_the_longest_remaining_chain_first) {
  CostPriors priors;
  priors.set(0, 1e-4);
  priors.set(1, 5e-4);
  priors.set(2, 3e-4);
  priors.set(3, 1e-3);
  {
    MopBook book = two_workers_four_configs();
    CriticalPathPolicy policy(7);
    priors.apply_to(policy);
    std::optional<Unit> first = policy.choose(0, book);
    BOOST_REQUIRE(first.has_value());
    BOOST_TEST(first->config == 3);
    book.start(0, *first);
    std::optional<Unit> second = policy.choose(1, book);
    BOOST_REQUIRE(second.has_value());
    BOOST_TEST(second->config == 1);
  }
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_worker(1, {1});
  for (ConfigId c = 0; c < 4; ++c) book.add_config(c, 2);
  CriticalPathPolicy policy(7);
  priors.apply_to(policy);
  std::optional<Unit> first = policy.choose(0, book);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->config == 3);
  book.start(0, *first);
  std::optional<Unit> second = policy.choose(1, book);
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(second->config == 0);
}

// Measured seconds replace a config's prior; the unmeasured configs' priors
// are rescaled by what the measured ones cost against their priors.
BOOST_AUTO_TEST_CASE(measured_times_replace_the_prior) {
  UnitTimeModel model;
  BOOST_TEST(!model.has_priors());
  model.set_prior(0, 1.0);
  model.set_prior(1, 10.0);
  BOOST_TEST(model.has_priors());
  BOOST_TEST(model.cost(1) / model.cost(0) == 10.0, boost::test_tools::tolerance(1e-9));
  model.observe(0, 0, 2.0);  // config 0 runs twice as slow as its prior said
  BOOST_TEST(model.knows_config(0));
  // Only ratios are meaningful: seconds per example on worker 0.
  BOOST_TEST(model.seconds_per_example(0, 0) == 2.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(model.seconds_per_example(1, 0) == 20.0, boost::test_tools::tolerance(1e-9));
  // Config 1's measurements take over from its (rescaled) prior of 20 as
  // they arrive: the prior counts as kPriorWeight observations.
  model.observe(1, 0, 5.0);
  BOOST_TEST(model.knows_config(1));
  const double after_one = model.seconds_per_example(1, 0);
  BOOST_TEST(after_one > 5.0);
  BOOST_TEST(after_one < 20.0);
  for (int i = 0; i < 30; ++i) model.observe(1, 0, 5.0);
  BOOST_TEST(model.seconds_per_example(1, 0) < after_one);
  BOOST_TEST(model.seconds_per_example(1, 0) == 5.0, boost::test_tools::tolerance(0.05));
  // A config without a prior costs the mean of the measured ones, or of the
  // priors before any is measured.
  BOOST_TEST(model.cost(2) == std::sqrt(model.cost(0) * model.cost(1)), boost::test_tools::tolerance(1e-9));
  UnitTimeModel fresh;
  fresh.set_prior(0, 1e-4);
  fresh.set_prior(1, 1e-2);
  BOOST_TEST(fresh.cost(2) == 1e-3, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(each_architecture_is_probed_once) {
  TableProbe probe;
  probe.seconds = {{"mlp", 1e-5}, {"cnn", 2e-4}};
  std::vector<std::pair<ConfigId, nlohmann::json>> configs = {
      {0, {{"model", "mlp"}, {"lr", 1e-3}, {"batch_size", 64}}},
      {1, {{"model", "mlp"}, {"lr", 3e-4}, {"batch_size", 64}}},   // same cost key as config 0
      {2, {{"model", "mlp"}, {"lr", 1e-3}, {"batch_size", 256}}},  // another batch size: probed
      {3, {{"model", "cnn"}, {"lr", 1e-3}, {"batch_size", 64}}},
      {4, {{"model", "tree"}, {"lr", 1e-3}}},                      // the probe fails
  };
  auto estimated = CostPriors::estimate(configs, probe);
  BOOST_TEST(probe.calls == 4);
  BOOST_TEST(estimated.probes == 4);
  BOOST_TEST(estimated.priors.seconds_per_example(1) == 1e-5);
  BOOST_TEST(estimated.priors.seconds_per_example(3) == 2e-4);
  BOOST_TEST(!estimated.priors.has(4));
  BOOST_REQUIRE_EQUAL(estimated.problems.size(), 1u);
  BOOST_TEST(estimated.problems[0].find("config 4") != std::string::npos);
  BOOST_TEST(cost_key(configs[0].second) == cost_key(configs[1].second));
  BOOST_TEST(cost_key(configs[0].second) != cost_key(configs[2].second));
}

BOOST_AUTO_TEST_CASE(priors_round_trip_through_json_and_reject_bad_input) {
  CostPriors priors;
  priors.set(0, 1e-5);
  priors.set(12, 3e-4);
  auto back = CostPriors::from_json(priors.to_json());
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->all() == priors.all());
  auto bad_key = CostPriors::from_json(nlohmann::json{{"x1", 1.0}});
  BOOST_REQUIRE(!bad_key.ok());
  BOOST_TEST(bad_key.error().find("'x1'") != std::string::npos);
  auto bad_value = CostPriors::from_json(nlohmann::json{{"3", -1.0}});
  BOOST_REQUIRE(!bad_value.ok());
  BOOST_TEST(bad_value.error().find("config 3") != std::string::npos);
  BOOST_CHECK_THROW(priors.set(1, 0.0), Error);
  BOOST_TEST(prior_unit_seconds(1e-4, 1000) == 0.1, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(prior_unit_seconds(1e-4, 1000, 10, 5) == 0.2, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
