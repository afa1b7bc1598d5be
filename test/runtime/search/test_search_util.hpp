#pragma once
// Helpers shared by the search tests: configs, outcomes and checks on the
// decisions a run produced.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "runtime/search/search_procedure.hpp"
#include "runtime/search/search_space.hpp"
#include "test/runtime/search/test_search_sim.hpp"

namespace cerebro::test {

// n configs 0..n-1 whose fake quality (see test_search_sim.cpp) is drawn from
// `seed`, plus an lr so PBT has something to perturb.
inline std::vector<ConfigParams> quality_configs(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> quality(0.1, 1.0), log_lr(-4.0, -2.0);
  std::vector<ConfigParams> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({i, {{"model", "mlp"}, {"quality", quality(rng)}, {"lr", std::pow(10.0, log_lr(rng))}}});
  }
  return out;
}

inline EpochOutcome outcome(ConfigId c, int32_t epoch, double accuracy) {
  return EpochOutcome{c, epoch, 1.0, 1.0 - accuracy, accuracy};
}

// Every epoch a config ended (and did not diverge on) got exactly one
// decision, and no decision names an epoch that did not end.
inline void check_one_decision_per_epoch_end(const SearchSimulation& sim, const std::vector<ConfigId>& configs) {
  std::map<std::pair<ConfigId, int32_t>, int> count;
  for (const auto& d : sim.decisions()) ++count[{d.config, d.epoch}];
  for (const auto& [key, n] : count) {
    BOOST_TEST(n == 1, "config " << key.first << " epoch " << key.second << " got " << n << " decisions");
    BOOST_TEST(key.second < sim.epochs_completed(key.first), "decision for an epoch that never ended");
  }
  for (ConfigId c : configs) {
    const ConfigStatus status = sim.control().outcomes().at(c).status;
    if (status == ConfigStatus::diverged || status == ConfigStatus::failed) continue;
    for (int32_t e = 0; e < sim.epochs_completed(c); ++e) {
      BOOST_TEST(count.count({c, e}) == 1u, "config " << c << " epoch " << e << " (" << status << ") has no decision");
    }
  }
}

}  // namespace cerebro::test
