#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <set>

#include "runtime/search/hyperband.hpp"
#include "test/runtime/search/test_search_util.hpp"

using namespace cerebro;
using namespace cerebro::test;

namespace {

std::vector<ConfigId> ids(int n) {
  std::vector<ConfigId> out;
  for (ConfigId c = 0; c < n; ++c) out.push_back(c);
  return out;
}

using Sizes = std::vector<int32_t>;

}  // namespace

BOOST_AUTO_TEST_SUITE(hyperband)

// Li et al. 2018, Table 1: R = 81, eta = 3.
BOOST_AUTO_TEST_CASE(brackets_for_R_81_eta_3_match_the_paper) {
  auto brackets = hyperband_brackets(81, 3).value();
  BOOST_REQUIRE_EQUAL(brackets.size(), 5u);
  BOOST_TEST(hyperband_max_brackets(81, 3).value() == 5);
  const std::vector<Sizes> sizes = {{81, 27, 9, 3, 1}, {34, 11, 3, 1}, {15, 5, 1}, {8, 2}, {5}};
  const std::vector<Sizes> epochs = {{1, 3, 9, 27, 81}, {3, 9, 27, 81}, {9, 27, 81}, {27, 81}, {81}};
  for (size_t i = 0; i < 5; ++i) {
    BOOST_TEST_CONTEXT("bracket s=" << 4 - i) {
      BOOST_TEST(brackets[i].s == static_cast<int32_t>(4 - i));
      BOOST_TEST(brackets[i].sizes == sizes[i], boost::test_tools::per_element());
      BOOST_TEST(brackets[i].epochs == epochs[i], boost::test_tools::per_element());
    }
  }
  BOOST_TEST(hyperband_config_count(81, 3).value() == 81 + 34 + 15 + 8 + 5);
  BOOST_TEST(hyperband_config_count(81, 3, 2).value() == 81 + 34);  // the first two brackets
}

// The same construction with eta = 2, R = 8 (the table in mlr3hyperband's manual).
BOOST_AUTO_TEST_CASE(brackets_for_R_8_eta_2) {
  auto brackets = hyperband_brackets(8, 2).value();
  BOOST_REQUIRE_EQUAL(brackets.size(), 4u);
  BOOST_TEST((brackets[0].sizes == Sizes{8, 4, 2, 1}));
  BOOST_TEST((brackets[0].epochs == Sizes{1, 2, 4, 8}));
  BOOST_TEST((brackets[1].sizes == Sizes{6, 3, 1}));
  BOOST_TEST((brackets[1].epochs == Sizes{2, 4, 8}));
  BOOST_TEST((brackets[2].sizes == Sizes{4, 2}));
  BOOST_TEST((brackets[2].epochs == Sizes{4, 8}));
  BOOST_TEST((brackets[3].sizes == Sizes{4}));
  BOOST_TEST((brackets[3].epochs == Sizes{8}));
}

BOOST_AUTO_TEST_CASE(budgets_that_are_not_powers_of_eta_round_down) {
  auto brackets = hyperband_brackets(10, 3).value();  // s_max = 2 (9 <= 10 < 27)
  BOOST_REQUIRE_EQUAL(brackets.size(), 3u);
  BOOST_TEST((brackets[0].sizes == Sizes{9, 3, 1}));
  BOOST_TEST((brackets[0].epochs == Sizes{1, 3, 10}));
  BOOST_TEST((brackets[1].sizes == Sizes{5, 1}));
  BOOST_TEST((brackets[1].epochs == Sizes{3, 10}));
  BOOST_TEST((brackets[2].sizes == Sizes{3}));
  BOOST_TEST((brackets[2].epochs == Sizes{10}));
  auto tiny = hyperband_brackets(2, 3).value();  // R < eta: one bracket, plain training to R
  BOOST_REQUIRE_EQUAL(tiny.size(), 1u);
  BOOST_TEST((tiny[0].sizes == Sizes{1}));
  BOOST_TEST(hyperband_brackets(81, 3, 6).status().is_invalid_argument());
  BOOST_TEST(hyperband_brackets(81, 1).status().is_invalid_argument());
  BOOST_TEST(hyperband_config_count(0, 3).status().is_invalid_argument());
  auto short_of_one = HyperbandProcedure::create(HyperbandOptions{9, 3}, ids(16));  // needs 17
  BOOST_TEST(short_of_one.status().is_invalid_argument());
  BOOST_TEST(short_of_one.error().find("need 17 configs, got 16") != std::string::npos, short_of_one.error());
  auto twice = ids(17);
  twice[16] = 0;
  BOOST_TEST(HyperbandProcedure::create(HyperbandOptions{9, 3}, twice).error().find("config 0 is given twice") !=
             std::string::npos);
}

// R = 9, eta = 3: brackets of 9 (rungs 9@1, 3@3, 1@9), 5 (5@3, 1@9) and 3 (3@9) configs.
BOOST_AUTO_TEST_CASE(a_rung_is_decided_when_its_last_racing_config_arrives) {
  auto made = HyperbandProcedure::create(HyperbandOptions{9, 3}, ids(17));
  BOOST_REQUIRE(made.ok());
  HyperbandProcedure& hb = **made;
  BOOST_TEST(hb.bracket_of(0) == 0u);
  BOOST_TEST(hb.bracket_of(9) == 1u);
  BOOST_TEST(hb.bracket_of(16) == 2u);
  // Bracket 0 rung 0: configs 0..8 reach 1 epoch; accuracy rises with the id.
  for (ConfigId c = 0; c < 8; ++c) BOOST_TEST(hb.decide(outcome(c, 0, 0.1 * c)).empty());
  auto decided = hb.decide(outcome(8, 0, 0.8));
  BOOST_REQUIRE_EQUAL(decided.size(), 9u);
  std::set<ConfigId> promoted;
  for (const auto& d : decided) {
    BOOST_TEST(d.epoch == 0);
    if (d.kind == SearchDecision::Kind::continue_training)
      promoted.insert(d.config);
    else
      BOOST_TEST((d.kind == SearchDecision::Kind::stop));
  }
  BOOST_TEST((promoted == std::set<ConfigId>{6, 7, 8}));
  BOOST_TEST(hb.reached(0, 0) == 9);
  // Epoch 2 (index 1) is no rung of bracket 0: on at once. Rung 1 is 3 epochs.
  BOOST_TEST((hb.decide(outcome(6, 1, 0.0))[0].kind == SearchDecision::Kind::continue_training));
  BOOST_TEST(hb.decide(outcome(6, 2, 0.9)).empty());
  BOOST_TEST(hb.decide(outcome(7, 2, 0.2)).empty());
  auto rung1 = hb.decide(outcome(8, 2, 0.5));
  BOOST_REQUIRE_EQUAL(rung1.size(), 3u);
  for (const auto& d : rung1) {
    BOOST_TEST(d.epoch == 2);
    BOOST_TEST((d.kind == (d.config == 6 ? SearchDecision::Kind::continue_training : SearchDecision::Kind::stop)));
  }
  // Bracket 2 (s = 0) trains straight to R.
  for (int32_t e = 0; e < 8; ++e) BOOST_TEST(hb.decide(outcome(16, e, 0.5)).size() == 1u);
  auto done = hb.decide(outcome(16, 8, 0.5));
  BOOST_TEST(done[0].reason.find("reached max_epochs 9") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_config_that_leaves_no_longer_holds_up_its_rung) {
  auto made = HyperbandProcedure::create(HyperbandOptions{9, 3}, ids(17));
  BOOST_REQUIRE(made.ok());
  HyperbandProcedure& hb = **made;
  for (ConfigId c = 9; c < 13; ++c) BOOST_TEST(hb.decide(outcome(c, 2, 0.1 * c)).empty());  // bracket 1 at 3 epochs
  BOOST_TEST(hb.on_config_ended(0).empty());                                                // another bracket
  auto decided = hb.on_config_ended(13);  // the last one racing in bracket 1 diverged
  BOOST_REQUIRE_EQUAL(decided.size(), 4u);
  BOOST_TEST(std::count_if(decided.begin(), decided.end(), [](const SearchDecision& d) {
               return d.kind == SearchDecision::Kind::continue_training && d.config == 12;
             }) == 1);
}

// Every bracket under a simulated cluster: without failures exactly n_i
// configs of each bracket train r_i epochs; with failures at most n_i.
BOOST_AUTO_TEST_CASE(simulated_clusters_run_the_brackets) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    auto in = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
    SimCluster cluster;
    cluster.workers = in(1, 8);
    cluster.partitions = in(1, 3);
    cluster.embedded = in(0, 1) == 0;
    const bool faults = seed % 2 == 0;
    cluster.unit_failure_p = faults ? 0.1 : 0.0;
    cluster.max_unit_retries = 2;
    cluster.diverge_p = faults ? 0.01 : 0.0;
    cluster.worker_removals = faults ? in(1, 3) : 0;
    const HyperbandOptions options{in(1, 10), in(2, 3), 0};
    BOOST_TEST_CONTEXT("seed " << seed << ": R " << options.max_epochs << ", eta " << options.eta) {
      const auto count = static_cast<int>(hyperband_config_count(options.max_epochs, options.eta).value());
      auto procedure = HyperbandProcedure::create(options, ids(count)).value();
      auto* hb = procedure.get();
      auto configs = quality_configs(count, seed);
      SearchSimulation sim(cluster, configs, options.max_epochs, std::move(procedure), seed);
      BOOST_TEST_REQUIRE(sim.run());
      Status s = sim.check();
      BOOST_TEST(s.ok(), s.message());
      std::vector<ConfigId> all = ids(static_cast<int>(configs.size()));
      check_one_decision_per_epoch_end(sim, all);
      for (size_t b = 0; b < hb->brackets().size(); ++b) {
        const auto& bracket = hb->brackets()[b];
        for (size_t i = 0; i < bracket.sizes.size(); ++i) {
          const auto trained = std::count_if(all.begin(), all.end(), [&](ConfigId c) {
            return hb->bracket_of(c) == b && sim.epochs_completed(c) >= bracket.epochs[i];
          });
          BOOST_TEST_CONTEXT("bracket s=" << bracket.s << " rung " << i) {
            if (faults)
              BOOST_TEST(trained <= bracket.sizes[i]);
            else
              BOOST_TEST(trained == bracket.sizes[i]);
          }
        }
      }
      // The best config of a fault-free bracket's last rung ran to R.
      if (!faults) {
        for (ConfigId c : all) {
          const auto& status = sim.control().outcomes().at(c).status;
          BOOST_TEST((status == ConfigStatus::completed) == (sim.epochs_completed(c) == options.max_epochs));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
