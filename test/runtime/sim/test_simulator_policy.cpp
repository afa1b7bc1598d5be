// The critical_path policy: its factory name, what UnitTimeModel learns from
// measured unit times, and that a config with a long remaining chain is run
// first once the policy has measured it.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

#include "runtime/scheduling/critical_path_policy.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/base/status.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_SUITE(critical_path_policy)

BOOST_AUTO_TEST_CASE(factory_knows_both_policies) {
  BOOST_TEST(policy_names() == (std::vector<std::string>{"randomized", "critical_path"}),
             boost::test_tools::per_element());
  BOOST_TEST(make_policy("critical_path", 1).value()->name() == "critical_path");
  auto lpt = make_policy("lpt", 1);
  BOOST_TEST(lpt.status().is_invalid_argument());
  BOOST_TEST(lpt.error().find("'lpt'") != std::string::npos, lpt.error());
  BOOST_TEST(lpt.error().find("randomized, critical_path") != std::string::npos, lpt.error());
}

BOOST_AUTO_TEST_CASE(model_learns_costs_and_speeds_from_times) {
  // 12 configs and 6 workers with true costs and speeds spanning 60x and 3x;
  // noise-free times of random (config, worker) pairs.
  std::mt19937_64 rng(5);
  std::vector<double> cost, speed;
  for (int c = 0; c < 12; ++c) cost.push_back(std::exp(std::uniform_real_distribution<double>(0, 4.1)(rng)));
  for (int w = 0; w < 6; ++w) speed.push_back(std::uniform_real_distribution<double>(5.6, 18.7)(rng));
  UnitTimeModel model;
  BOOST_TEST(model.seconds_per_example(0, 0) == 0.0);
  BOOST_TEST(!model.knows_config(0));
  for (int i = 0; i < 3000; ++i) {
    int c = std::uniform_int_distribution<int>(0, 11)(rng);
    int w = std::uniform_int_distribution<int>(0, 5)(rng);
    model.observe(c, w, cost[c] / speed[w]);
  }
  for (int c = 0; c < 12; ++c) {
    BOOST_TEST(model.knows_config(c));
    for (int w = 0; w < 6; ++w) {
      BOOST_TEST_CONTEXT("config " << c << " worker " << w) {
        double truth = cost[c] / speed[w];
        BOOST_TEST(std::abs(model.seconds_per_example(c, w) / truth - 1) < 0.02);
      }
    }
  }
  // Only ratios are identifiable: compare them.
  BOOST_TEST(std::abs((model.speed(1) / model.speed(0)) / (speed[1] / speed[0]) - 1) < 0.02);
  // Unknown ids get the (geometric) mean; nonsense times are ignored.
  BOOST_TEST(!model.knows_worker(99));
  BOOST_TEST(model.speed(99) > 0);
  double before = model.cost(3);
  model.observe(3, 0, 0.0);
  model.observe(3, 0, -1.0);
  model.observe(3, 0, std::nan(""));
  BOOST_TEST(model.cost(3) == before);
}

// The first units of a real run with worker 1 slowed ~5x (train seconds per
// unit): only configs 1 and 2 ran on both workers. Online updates alone
// estimated the ratio at 2.2; the least-squares refit finds it.
BOOST_AUTO_TEST_CASE(model_learns_a_speed_ratio_from_a_short_run) {
  UnitTimeModel model;
  struct Sample {
    ConfigId config;
    WorkerId worker;
    double seconds;
  };
  for (Sample s :
       {Sample{0, 0, 0.587}, Sample{1, 1, 0.602}, Sample{2, 0, 0.133}, Sample{2, 0, 0.110}, Sample{3, 1, 0.532},
        Sample{0, 0, 0.633}, Sample{1, 0, 0.110}, Sample{2, 1, 0.674}, Sample{0, 0, 0.667}, Sample{3, 1, 0.645}}) {
    model.observe(s.config, s.worker, s.seconds);
  }
  double ratio = model.speed(0) / model.speed(1);
  BOOST_TEST_MESSAGE("estimated speed ratio " << ratio);
  BOOST_TEST(ratio > 4.5);
  BOOST_TEST(ratio < 6.5);
  // Configs 1 and 3 are the same model: their costs come out close.
  BOOST_TEST(std::abs(std::log(model.cost(1) / model.cost(3))) < 0.3);
}

BOOST_AUTO_TEST_CASE(model_tracks_a_worker_that_slows_down) {
  UnitTimeModel model;
  for (int i = 0; i < 200; ++i) {
    model.observe(i % 4, i % 2, (1 + i % 4) / 10.0);  // workers 0 and 1 at speed 10
  }
  for (int i = 0; i < 200; ++i) {
    model.observe(i % 4, 0, (1 + i % 4) / 10.0);
    model.observe(i % 4, 1, (1 + i % 4) / 2.5);  // worker 1 now 4x slower
  }
  BOOST_TEST(std::abs(model.speed(0) / model.speed(1) / 4 - 1) < 0.1);
}

// Two workers each holding one partition; config 0 costs 10x the others.
// After one epoch of everyone has been measured, config 0's chain is critical
// and every idle worker that can run it does.
BOOST_AUTO_TEST_CASE(measured_long_chain_runs_first) {
  MopBook book(2);
  book.add_worker(0, {0});
  book.add_worker(1, {1});
  for (ConfigId c = 0; c < 6; ++c) book.add_config(c, 4);
  CriticalPathPolicy policy(3);
  auto run = [&](WorkerId w, const Unit& u) {
    book.start(w, u);
    policy.observe({w, u, (u.config == 0 ? 10.0 : 1.0) * 100, 0, 100});
    if (book.complete(w, u)) book.advance(u.config);
  };
  for (ConfigId c = 0; c < 6; ++c) {
    run(0, Unit{c, 0, 0});
    run(1, Unit{c, 1, 0});
  }
  BOOST_TEST(policy.model().cost(0) / policy.model().cost(1) == 10.0, boost::test_tools::tolerance(1e-9));
  for (int round = 0; round < 3; ++round) {
    std::optional<Unit> u = policy.choose(round % 2, book);
    BOOST_REQUIRE(u.has_value());
    BOOST_TEST(u->config == 0);
    // While it runs it is out of the list of idle critical configs; its
    // observed unit puts it back.
    BOOST_TEST(policy.critical().empty());
    run(round % 2, *u);
    BOOST_TEST(policy.critical() == std::vector<ConfigId>{0}, boost::test_tools::per_element());
  }
  // Config 0 has done partition 0 in this epoch: worker 0 gets another
  // config (never idles), and worker 1 then gets config 0.
  std::optional<Unit> on_0 = policy.choose(0, book);
  BOOST_REQUIRE(on_0.has_value());
  BOOST_TEST(on_0->config != 0);
  book.start(0, *on_0);
  std::optional<Unit> on_1 = policy.choose(1, book);
  BOOST_REQUIRE(on_1.has_value());
  BOOST_TEST(on_1->config == 0);
}

BOOST_AUTO_TEST_SUITE_END()
