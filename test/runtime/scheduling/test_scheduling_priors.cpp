// Cost priors (runtime/scheduling/cost_prior.hpp): the critical_path policy
// ranks configs by their priors before any unit is measured, measured times
// replace the priors, and CostPriors probes each architecture once.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
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
    if (it == seconds.end()) return Status::not_found("no such model in the table");
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
  for (ConfigId c = 0; c < 3; ++c) BOOST_REQUIRE(priors.set(c, 1e-4).ok());
  BOOST_REQUIRE(priors.set(3, 1e-3).ok());
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
  BOOST_REQUIRE(priors.set(0, 1e-4).ok());
  BOOST_REQUIRE(priors.set(1, 5e-4).ok());
  BOOST_REQUIRE(priors.set(2, 3e-4).ok());
  BOOST_REQUIRE(priors.set(3, 1e-3).ok());
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

// A real 2-worker bench run (embedded: both workers hold both partitions; 4
// cnn configs 1, 3, 5, 7 and 4 mlp configs; 2 epochs), replayed: its cost
// priors and its first 19 units, dispatched and committed in the order the
// run did. The priors overrate the cnns against the mlps, which mostly ran on
// worker 0, so the fit took worker 0 for 20-25% slower. At 9.64 s worker 0
// asks for work with cnn config 3 idle and two units from its end: the run
// gave it mlp config 0 (at random: a 10% slower worker skipped longest-chain
// first), and config 7's last unit later ran alone at the end.
BOOST_AUTO_TEST_CASE(a_worker_fit_slower_by_the_priors_bias_still_runs_the_longest_chain) {
  struct Recorded {
    ConfigId config;
    PartitionId partition;
    int32_t epoch;
    WorkerId worker;
    double start_s, end_s, train_s, validate_s;
  };
  const std::vector<Recorded> units = {
      {7, 0, 0, 1, 0.000, 1.585, 1.569, 0.000}, {5, 0, 0, 0, 0.000, 2.159, 2.143, 0.000},
      {0, 0, 0, 0, 2.169, 2.334, 0.162, 0.000}, {2, 0, 0, 0, 2.348, 2.494, 0.139, 0.000},
      {1, 0, 0, 1, 1.593, 3.166, 1.569, 0.000}, {2, 1, 0, 1, 3.171, 3.327, 0.139, 0.009},
      {3, 0, 0, 0, 2.505, 3.981, 1.470, 0.000}, {4, 0, 0, 0, 3.990, 4.090, 0.095, 0.000},
      {6, 0, 0, 0, 4.097, 4.197, 0.097, 0.000}, {4, 1, 0, 0, 4.202, 4.313, 0.098, 0.009},
      {0, 1, 0, 0, 4.320, 4.464, 0.132, 0.009}, {4, 0, 1, 0, 4.471, 4.573, 0.098, 0.000},
      {2, 0, 1, 0, 4.579, 4.714, 0.132, 0.000}, {1, 1, 0, 1, 3.335, 5.198, 1.487, 0.373},
      {7, 1, 0, 0, 4.720, 6.589, 1.494, 0.371}, {5, 1, 0, 1, 5.204, 7.095, 1.519, 0.367},
      {7, 1, 1, 0, 6.595, 8.188, 1.589, 0.000}, {3, 1, 0, 1, 7.101, 8.943, 1.468, 0.370},
      {5, 1, 1, 0, 8.193, 9.634, 1.437, 0.000}, {1, 0, 1, 1, 8.949, 10.491, 1.539, 0.000}};
  const std::map<ConfigId, double> recorded_priors = {{0, 1.3506e-05},  {1, 2.50445e-04}, {2, 1.3506e-05},
                                                      {3, 2.50445e-04}, {4, 9.633e-06},   {5, 2.56504e-04},
                                                      {6, 9.633e-06},   {7, 2.56504e-04}};
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_worker(1, {0, 1});
  for (ConfigId c = 0; c < 8; ++c) book.add_config(c, 2);
  CriticalPathPolicy policy(42);
  CostPriors priors;
  for (const auto& [c, seconds] : recorded_priors) BOOST_REQUIRE(priors.set(c, seconds).ok());
  priors.apply_to(policy);
  // Dispatches and commits in time order (a commit first at equal times).
  struct Event {
    double t;
    bool dispatch;
    const Recorded* unit;
  };
  std::vector<Event> events;
  for (const auto& u : units) {
    events.push_back({u.start_s, true, &u});
    if (u.end_s < 9.64) events.push_back({u.end_s, false, &u});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.t < b.t || (a.t == b.t && !a.dispatch && b.dispatch);
  });
  for (const auto& e : events) {
    const Unit u{e.unit->config, e.unit->partition, e.unit->epoch};
    if (e.dispatch) {
      book.start(e.unit->worker, u);
    } else {
      if (book.complete(e.unit->worker, u)) book.advance(u.config);
      policy.observe({e.unit->worker, u, e.unit->train_s, e.unit->validate_s, 9000});
    }
  }
  BOOST_TEST(policy.model().speed(0) / policy.model().speed(1) < 1 / 1.1, "worker 0 is fit more than 10% slower");
  std::optional<Unit> next = policy.choose(0, book);
  BOOST_REQUIRE(next.has_value());
  BOOST_TEST(next->config == 3, "the longest remaining chain (config 3: two cnn units), not a light config");
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
      {4, {{"model", "tree"}, {"lr", 1e-3}}},  // the probe fails
  };
  auto estimated = CostPriors::estimate(configs, probe);
  BOOST_TEST(probe.calls == 4);
  BOOST_TEST(estimated.probes == 4);
  BOOST_TEST(estimated.priors.seconds_per_example(1).value() == 1e-5);
  BOOST_TEST(estimated.priors.seconds_per_example(3).value() == 2e-4);
  BOOST_TEST(!estimated.priors.has(4));
  BOOST_REQUIRE_EQUAL(estimated.problems.size(), 1u);
  BOOST_TEST(estimated.problems[0].find("config 4") != std::string::npos);
  BOOST_TEST(cost_key(configs[0].second) == cost_key(configs[1].second));
  BOOST_TEST(cost_key(configs[0].second) != cost_key(configs[2].second));
}

BOOST_AUTO_TEST_CASE(priors_round_trip_through_json_and_reject_bad_input) {
  CostPriors priors;
  BOOST_REQUIRE(priors.set(0, 1e-5).ok());
  BOOST_REQUIRE(priors.set(12, 3e-4).ok());
  auto back = CostPriors::from_json(priors.to_json());
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->all() == priors.all());
  auto bad_key = CostPriors::from_json(nlohmann::json{{"x1", 1.0}});
  BOOST_REQUIRE(!bad_key.ok());
  BOOST_TEST(bad_key.error().find("'x1'") != std::string::npos);
  auto bad_value = CostPriors::from_json(nlohmann::json{{"3", -1.0}});
  BOOST_REQUIRE(!bad_value.ok());
  BOOST_TEST(bad_value.error().find("config 3") != std::string::npos);
  BOOST_TEST(priors.set(1, 0.0).is_invalid_argument());
  BOOST_TEST(priors.set(1, std::nan("")).is_invalid_argument());
  BOOST_TEST(!priors.has(1));
  BOOST_TEST(bad_key.status().is_invalid_argument());
  BOOST_TEST(bad_value.status().is_invalid_argument());
  BOOST_TEST(!priors.seconds_per_example(1).has_value());
  BOOST_TEST(prior_unit_seconds(1e-4, 1000) == 0.1, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(prior_unit_seconds(1e-4, 1000, 10, 5) == 0.2, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
