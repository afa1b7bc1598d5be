#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "runtime/search/pbt.hpp"
#include "test/support/contract_check.hpp"
#include "test/runtime/search/test_search_util.hpp"

using namespace cerebro;
using namespace cerebro::test;
using nlohmann::json;

namespace {

const json kSpace = json::parse(R"({
  "model": ["mlp", "cnn"],
  "lr": {"dist": "loguniform", "low": 1e-5, "high": 1e-1},
  "dropout": [0, 0.5],
  "batch_size": [32, 256],
  "momentum": [0.9],
  "optimizer": ["adam"]
})");

std::vector<ConfigParams> population(int n) {
  std::vector<ConfigParams> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({i,
                   {{"model", i % 2 ? "cnn" : "mlp"},
                    {"lr", 1e-3 * (i + 1)},
                    {"dropout", 0.1 * i},
                    {"batch_size", 64},
                    {"momentum", 0.9},
                    {"optimizer", "adam"}}});
  }
  return out;
}

PbtOptions options_for(int32_t epochs, int32_t ready = 1, std::vector<std::string> keys = {}) {
  PbtOptions o;
  o.epochs = epochs;
  o.ready = ready;
  o.ranges = perturb_ranges(kSpace, keys).value();
  o.seed = 7;
  return o;
}

bool is_factor_of(double value, double base, const std::vector<double>& factors) {
  for (double f : factors) {
    if (std::abs(value - base * f) <= 1e-12 * std::abs(base * f)) return true;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pbt)

BOOST_AUTO_TEST_CASE(default_perturbed_keys_are_the_float_ranges) {
  auto ranges = perturb_ranges(kSpace, {}).value();
  BOOST_TEST(ranges.size() == 2u);  // lr and dropout; not the integer batch sizes, the single momentum, strings
  BOOST_TEST(ranges.at("lr").low == 1e-5);
  BOOST_TEST(ranges.at("lr").high == 1e-1);
  BOOST_TEST(!ranges.at("lr").integer);
  BOOST_TEST(ranges.at("dropout").high == 0.5);
  auto explicit_keys = perturb_ranges(kSpace, {"batch_size"}).value();
  BOOST_TEST(explicit_keys.at("batch_size").integer);
  BOOST_TEST(explicit_keys.at("batch_size").low == 32);
  auto error = [](const std::vector<std::string>& keys) { return perturb_ranges(kSpace, keys).error(); };
  BOOST_TEST(error({"lrr"}) == "[experiment] perturb_keys names 'lrr', which is not in [space] (did you mean 'lr'?)");
  BOOST_TEST(error({"model"}) == "[experiment] perturb_keys names 'model', which is not numeric in [space]");
  BOOST_TEST(error({"momentum"}).find("'momentum', which has a single value") != std::string::npos);
  BOOST_TEST(error({"lr", "lr"}) == "[experiment] perturb_keys names 'lr' twice");
  BOOST_TEST(perturb_ranges(json::parse(R"({"model": ["mlp"], "batch_size": [32, 64]})"), {})
                 .error()
                 .find("nothing to perturb") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(options_out_of_range_or_a_member_twice_are_invalid) {
  auto no_ready = options_for(4, 0);
  auto refused = PbtProcedure::create(no_ready, population(2));
  BOOST_TEST(refused.status().is_invalid_argument());
  BOOST_TEST(refused.error().find("ready >= 1") != std::string::npos, refused.error());
  auto twice = population(2);
  twice[1].id = 0;
  BOOST_TEST(PbtProcedure::create(options_for(4), twice).error() == "pbt: config 0 is in the population twice");
  BOOST_TEST(PbtProcedure::create(options_for(4), population(2)).ok());
  CEREBRO_CHECK_CONTRACT(PbtProcedure(options_for(4), twice), "PbtProcedure: pbt: config 0 is in the population twice");
  PbtProcedure pbt(options_for(4), population(2));
  CEREBRO_CHECK_CONTRACT(pbt.params(7), "pbt: config 7 is not in the population");
}

// Population of 4, exploit_fraction 0.25: the bottom member copies the top one.
BOOST_AUTO_TEST_CASE(the_bottom_member_copies_a_top_member_and_perturbs) {
  auto members = population(4);
  PbtProcedure pbt(options_for(4), members);
  BOOST_TEST(pbt.decide(outcome(0, 0, 0.9))[0].reason == "ready, but no other member has a score yet");
  BOOST_TEST(pbt.decide(outcome(1, 0, 0.95))[0].reason == "ready: rank 1 of 2, not in the bottom 1");
  auto bottom_of_two = pbt.decide(outcome(0, 1, 0.9));
  BOOST_TEST((bottom_of_two[0].kind == SearchDecision::Kind::exploit));
  BOOST_TEST(bottom_of_two[0].source == 1);
  PbtProcedure fresh(options_for(4), members);
  // Each arrival ranks above the bottom, so none exploits.
  for (auto [c, epoch, accuracy] : std::vector<std::tuple<int, int, double>>{{2, 0, 0.7}, {1, 1, 0.8}, {0, 0, 0.9}}) {
    BOOST_TEST((fresh.decide(outcome(c, epoch, accuracy))[0].kind == SearchDecision::Kind::continue_training));
  }
  auto decisions = fresh.decide(outcome(3, 0, 0.1));
  BOOST_REQUIRE_EQUAL(decisions.size(), 1u);
  const SearchDecision& d = decisions[0];
  BOOST_TEST((d.kind == SearchDecision::Kind::exploit));
  BOOST_TEST(d.config == 3);
  BOOST_TEST(d.epoch == 0);
  BOOST_TEST(d.source == 0);        // the top member
  BOOST_TEST(d.source_epoch == 0);  // the epoch whose end state it scored
  // The source's hyper-parameters, with lr and dropout multiplied by 0.8 or 1.2.
  const json& from = members[0].params;
  BOOST_TEST(d.params["model"] == from["model"]);
  BOOST_TEST(d.params["batch_size"] == from["batch_size"]);
  BOOST_TEST(d.params["momentum"] == from["momentum"]);
  BOOST_TEST(is_factor_of(d.params["lr"].get<double>(), from["lr"].get<double>(), {0.8, 1.2}));
  BOOST_TEST(d.params["dropout"] == 0.0);  // 0 times any factor
  BOOST_TEST(fresh.params(3) == d.params);
  BOOST_TEST(d.reason.find("copies rank 1 (config 0)") != std::string::npos);
  // Until it is evaluated again the copied member is not ranked: member 2 is the bottom now.
  auto next = fresh.decide(outcome(2, 1, 0.7));
  BOOST_TEST((next[0].kind == SearchDecision::Kind::exploit));
  BOOST_TEST(next[0].source == 0);
}

BOOST_AUTO_TEST_CASE(perturbations_stay_within_the_factors_and_ranges) {
  PbtProcedure pbt(options_for(4, 1, {"lr", "batch_size", "dropout"}), population(2));
  std::set<double> seen_factors;
  for (int i = 0; i < 200; ++i) {
    const json base = {{"lr", 1e-3}, {"batch_size", 64}, {"dropout", 0.45}, {"model", "mlp"}};
    const json p = pbt.perturbed(base);
    const double lr = p["lr"].get<double>();
    BOOST_TEST(is_factor_of(lr, 1e-3, {0.8, 1.2}));
    seen_factors.insert(std::round(lr / 1e-4));
    BOOST_TEST(p["batch_size"].is_number_integer());  // 51.2 -> 51, 76.8 -> 77
    BOOST_TEST((p["batch_size"] == 51 || p["batch_size"] == 77));
    const double dropout = p["dropout"].get<double>();
    BOOST_TEST((std::abs(dropout - 0.36) < 1e-12 || dropout == 0.5));  // 0.54 is clamped to the range's 0.5
    BOOST_TEST(p["model"] == "mlp");
  }
  BOOST_TEST(seen_factors.size() == 2u);  // both factors are drawn
}

BOOST_AUTO_TEST_CASE(exploits_happen_only_every_ready_epochs_and_never_after_the_last) {
  PbtProcedure pbt(options_for(6, 2), population(2));
  pbt.decide(outcome(0, 1, 0.9));
  auto kind = [&](int32_t epoch) { return pbt.decide(outcome(1, epoch, 0.1))[0].kind; };
  BOOST_TEST((kind(0) == SearchDecision::Kind::continue_training));  // 1 epoch trained: not ready
  BOOST_TEST((kind(1) == SearchDecision::Kind::exploit));            // 2 epochs
  BOOST_TEST((kind(2) == SearchDecision::Kind::continue_training));
  BOOST_TEST((kind(3) == SearchDecision::Kind::exploit));            // 4 epochs
  BOOST_TEST((kind(5) == SearchDecision::Kind::continue_training));  // 6: the last
}

BOOST_AUTO_TEST_CASE(a_member_that_ended_is_no_source) {
  PbtProcedure pbt(options_for(4), population(3));
  pbt.decide(outcome(1, 0, 0.5));
  pbt.decide(outcome(0, 0, 0.9));
  BOOST_TEST(pbt.on_config_ended(0).empty());
  auto d = pbt.decide(outcome(2, 0, 0.1));
  BOOST_TEST((d[0].kind == SearchDecision::Kind::exploit));
  BOOST_TEST(d[0].source == 1);
}

// PBT under simulated clusters: the shell executes every copy exactly (see
// test_search_sim.hpp), each copy comes from a member that scored better,
// and every member trains all its epochs.
BOOST_AUTO_TEST_CASE(simulated_clusters_copy_states_exactly) {
  int64_t copies = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    auto in = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
    BOOST_TEST_CONTEXT("seed " << seed) {
      SimCluster cluster;
      cluster.workers = in(1, 8);
      cluster.partitions = in(1, 3);
      cluster.embedded = in(0, 1) == 0;
      cluster.unit_failure_p = in(0, 2) == 0 ? 0.05 : 0.0;
      cluster.worker_removals = in(0, 2);
      cluster.copy_delay = 0.1 * in(0, 5);
      auto configs = quality_configs(in(2, 12), seed);
      PbtOptions options;
      options.epochs = in(2, 8);
      options.ready = in(1, options.epochs - 1);
      options.exploit_fraction = in(0, 1) ? 0.25 : 0.5;
      options.ranges = {{"lr", PerturbRange{1e-5, 1e-1, false}}, {"quality", PerturbRange{0.1, 1.0, false}}};
      options.seed = seed;
      SearchSimulation sim(cluster, configs, options.epochs, std::make_unique<PbtProcedure>(options, configs), seed);
      BOOST_TEST_REQUIRE(sim.run());
      Status s = sim.check();
      BOOST_TEST(s.ok(), s.message());
      std::vector<ConfigId> ids;
      for (const auto& c : configs) ids.push_back(c.id);
      check_one_decision_per_epoch_end(sim, ids);
      size_t exploit_count = 0;
      for (const auto& d : sim.decisions()) {
        if (d.kind != SearchDecision::Kind::exploit) continue;
        BOOST_REQUIRE_LT(exploit_count, sim.copies().size());
        const StateCopy& copy = sim.copies()[exploit_count++];  // in the order decided
        BOOST_TEST(copy.to == d.config);
        BOOST_TEST(copy.from == d.source);
        BOOST_TEST(copy.from_epoch == d.source_epoch);
        BOOST_TEST(copy.params == d.params);
        BOOST_TEST(sim.accuracy(d.source, d.source_epoch) >= sim.accuracy(d.config, d.epoch));
      }
      BOOST_TEST(exploit_count == sim.copies().size());
      copies += static_cast<int64_t>(exploit_count);
      for (ConfigId c : ids) {
        const auto& status = sim.control().outcomes().at(c).status;
        if (status != ConfigStatus::failed) BOOST_TEST(status == ConfigStatus::completed);
        if (status == ConfigStatus::completed) BOOST_TEST(sim.epochs_completed(c) == options.epochs);
      }
    }
  }
  BOOST_TEST(copies > 100);
}

BOOST_AUTO_TEST_SUITE_END()
