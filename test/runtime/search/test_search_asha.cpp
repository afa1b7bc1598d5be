#define BOOST_TEST_MODULE search
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <random>

#include "runtime/search/asha.hpp"
#include "test/support/contract_check.hpp"
#include "test/runtime/search/test_search_util.hpp"

using namespace cerebro;
using namespace cerebro::test;

namespace {

// Drives an ASHA procedure with `configs` configs trained to max_epochs, one
// config after the other reaching each rung in id order. The score a config
// gets at a rung is score(k) for the k-th (1-based) config to arrive there.
// Returns how many configs trained each epoch count 1..max_epochs.
std::vector<int> run_in_order(AshaProcedure& asha, int configs, int32_t max_epochs, std::function<double(int)> score) {
  std::vector<int> trained(max_epochs + 1, 0);
  std::vector<ConfigId> alive;
  for (ConfigId c = 0; c < configs; ++c) alive.push_back(c);
  for (int32_t epoch = 0; epoch < max_epochs && !alive.empty(); ++epoch) {
    std::vector<ConfigId> next;
    int arrival = 0;
    for (ConfigId c : alive) {
      ++trained[epoch + 1];
      auto decisions = asha.decide(outcome(c, epoch, score(++arrival)));
      BOOST_REQUIRE_EQUAL(decisions.size(), 1u);  // ASHA decides at once, for the arriving config only
      BOOST_TEST(decisions[0].config == c);
      BOOST_TEST(decisions[0].epoch == epoch);
      if (decisions[0].kind == SearchDecision::Kind::continue_training) next.push_back(c);
    }
    alive = next;
  }
  return trained;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(asha)

BOOST_AUTO_TEST_CASE(rungs_are_geometric_below_max_epochs) {
  BOOST_TEST((asha_rungs(1, 9, 3) == std::vector<int32_t>{1, 3}));
  BOOST_TEST((asha_rungs(1, 27, 3) == std::vector<int32_t>{1, 3, 9}));
  BOOST_TEST((asha_rungs(2, 20, 2) == std::vector<int32_t>{2, 4, 8, 16}));
  BOOST_TEST((asha_rungs(1, 10, 3) == std::vector<int32_t>{1, 3, 9}));
  BOOST_TEST(asha_rungs(9, 9, 3).empty());
  auto eta_1 = AshaProcedure::create(AshaOptions{9, 1, 1});
  BOOST_TEST(eta_1.status().is_invalid_argument());
  BOOST_TEST(eta_1.error().find("eta >= 2, got 9, 1 and 1") != std::string::npos, eta_1.error());
  BOOST_TEST(AshaProcedure::create(AshaOptions{0, 1, 3}).status().is_invalid_argument());
  BOOST_TEST(AshaProcedure::create(AshaOptions{9, 1, 3}).ok());
  CEREBRO_CHECK_CONTRACT(AshaProcedure(AshaOptions{9, 1, 1}), "AshaProcedure: asha: needs");
}

// 27 configs, eta 3, R 9: rungs at 1 and 3 epochs. When each triple of
// arrivals holds one config better than everything so far and two worse (the
// arrival order says nothing about quality), exactly 1/eta go on at each
// rung: 27 configs train 1 epoch, 9 reach 3 epochs and 3 reach R = 9.
BOOST_AUTO_TEST_CASE(rung_counts_for_27_configs_eta_3_R_9) {
  AshaProcedure asha(AshaOptions{9, 1, 3});
  auto score = [](int k) { return k % 3 == 1 ? 100.0 + k : -static_cast<double>(k); };
  auto trained = run_in_order(asha, 27, 9, score);
  BOOST_TEST(trained[1] == 27);
  BOOST_TEST(trained[2] == 9);
  BOOST_TEST(trained[3] == 9);
  BOOST_TEST(trained[4] == 3);
  BOOST_TEST(trained[9] == 3);
  BOOST_TEST(asha.reached(0) == 27);
  BOOST_TEST(asha.promoted(0) == 9);
  BOOST_TEST(asha.reached(1) == 9);
  BOOST_TEST(asha.promoted(1) == 3);
}

// The asynchronous rule's extremes, which the ASHA paper discusses: arrivals
// in rising quality each beat everything so far and all go on; in falling
// quality only the first (the best) does.
BOOST_AUTO_TEST_CASE(arrival_order_extremes) {
  AshaProcedure rising(AshaOptions{9, 1, 3});
  auto up = run_in_order(rising, 27, 9, [](int k) { return static_cast<double>(k); });
  BOOST_TEST(up[9] == 27);
  AshaProcedure falling(AshaOptions{9, 1, 3});
  auto down = run_in_order(falling, 27, 9, [](int k) { return -static_cast<double>(k); });
  BOOST_TEST(down[2] == 1);
  BOOST_TEST(down[9] == 1);
}

BOOST_AUTO_TEST_CASE(a_config_continues_while_fewer_than_n_over_eta_are_better) {
  AshaProcedure asha(AshaOptions{4, 1, 2});  // rungs at 1 and 2 epochs, eta 2
  auto kind = [&](ConfigId c, double accuracy) { return asha.decide(outcome(c, 0, accuracy))[0].kind; };
  using K = SearchDecision::Kind;
  BOOST_TEST((kind(0, 0.5) == K::continue_training));   // 0 better of 1
  BOOST_TEST((kind(1, 0.4) == K::stop));                // 1 better of 2: 1 * 2 >= 2
  BOOST_TEST((kind(2, 0.6) == K::continue_training));   // 0 better of 3
  BOOST_TEST((kind(3, 0.45) == K::stop));               // 2 better of 4
  BOOST_TEST((kind(4, 0.55) == K::continue_training));  // 1 better of 5: 2 < 5
  BOOST_TEST((kind(5, 0.5) == K::continue_training));   // 2 better of 6 (the equal 0.5 is not better)
  BOOST_TEST((kind(6, 0.4) == K::stop));                // 5 better of 7
  auto stopped = asha.decide(outcome(7, 0, 0.1));
  BOOST_TEST(stopped[0].reason == "not in the top 1/2 at rung 1 epochs: 7 of the 8 configs there so far are better");
  // Between rungs and at R: always on, the last one with a reason.
  BOOST_TEST((asha.decide(outcome(0, 2, 0.0))[0].kind == K::continue_training));
  auto last = asha.decide(outcome(0, 3, 0.0));
  BOOST_TEST((last[0].kind == K::continue_training));
  BOOST_TEST(last[0].reason.find("max_epochs 4") != std::string::npos);
  auto first_at_rung_2 = asha.decide(outcome(2, 1, 0.0));
  BOOST_TEST((first_at_rung_2[0].kind == K::continue_training));
}

BOOST_AUTO_TEST_CASE(val_loss_ranks_lower_as_better_and_nan_as_worst) {
  AshaProcedure asha(AshaOptions{9, 1, 3, SearchMetric::val_loss});
  auto with_loss = [](ConfigId c, double loss) { return EpochOutcome{c, 0, 1.0, loss, 0.99}; };
  BOOST_TEST((asha.decide(with_loss(0, 0.5))[0].kind == SearchDecision::Kind::continue_training));
  BOOST_TEST((asha.decide(with_loss(1, 0.7))[0].kind == SearchDecision::Kind::stop));
  BOOST_TEST((asha.decide(with_loss(2, 0.6))[0].kind == SearchDecision::Kind::stop));
  BOOST_TEST((asha.decide(with_loss(3, 0.1))[0].kind == SearchDecision::Kind::continue_training));
  BOOST_TEST((asha.decide(with_loss(4, std::nan("")))[0].kind == SearchDecision::Kind::stop));
  BOOST_TEST(metric_score(with_loss(0, std::nan("")), SearchMetric::val_loss) == -INFINITY);
}

// Driven by a simulated cluster: MOP's invariants hold, stops happen only at
// rungs, completed configs trained R epochs, every epoch end got one decision.
BOOST_AUTO_TEST_CASE(simulated_clusters_keep_the_mop_invariants) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    std::mt19937_64 rng(seed);
    auto in = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
    SimCluster cluster;
    cluster.workers = in(1, 8);
    cluster.partitions = in(1, 4);
    cluster.embedded = in(0, 2) != 0;
    cluster.unit_failure_p = in(0, 1) ? 0.05 : 0.0;
    cluster.diverge_p = in(0, 3) == 0 ? 0.01 : 0.0;
    cluster.worker_removals = in(0, 2);
    const int32_t eta = in(2, 4), max_epochs = in(1, 12), min_epochs = in(1, 2);
    BOOST_TEST_CONTEXT("seed " << seed << ": eta " << eta << ", R " << max_epochs << ", r " << min_epochs) {
      auto procedure = std::make_unique<AshaProcedure>(AshaOptions{max_epochs, min_epochs, eta});
      auto* asha = procedure.get();
      auto configs = quality_configs(in(1, 30), seed);
      SearchSimulation sim(cluster, configs, max_epochs, std::move(procedure), seed);
      BOOST_TEST_REQUIRE(sim.run());
      Status s = sim.check();
      BOOST_TEST(s.ok(), s.message());
      std::vector<ConfigId> ids;
      for (const auto& c : configs) ids.push_back(c.id);
      check_one_decision_per_epoch_end(sim, ids);
      const auto& rungs = asha->rungs();
      std::vector<int64_t> reached(rungs.size(), 0);
      for (ConfigId c : ids) {
        const auto& outcome = sim.control().outcomes().at(c);
        const int32_t trained = sim.epochs_completed(c);
        if (outcome.status == ConfigStatus::completed) BOOST_TEST(trained == max_epochs);
        if (outcome.status == ConfigStatus::stopped) {
          BOOST_TEST((std::find(rungs.begin(), rungs.end(), trained) != rungs.end()),
                     "config " << c << " stopped after " << trained);
        }
        for (size_t k = 0; k < rungs.size(); ++k) {
          if (trained >= rungs[k] && outcome.status != ConfigStatus::diverged) ++reached[k];
        }
      }
      for (size_t k = 0; k < rungs.size(); ++k) {
        BOOST_TEST(asha->reached(k) >= reached[k]);                    // a config that diverged later also counted
        if (asha->reached(k) > 0) BOOST_TEST(asha->promoted(k) >= 1);  // the first arrival always goes on
        if (k + 1 < rungs.size()) BOOST_TEST(asha->reached(k + 1) <= asha->promoted(k));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
