// The simulator: its workload and lower bound, and whole simulated runs of
// both policies: MOP invariants on the unit log, lower bound <= makespan,
// determinism per seed, reported latencies, and critical_path against
// randomized on heterogeneous clusters.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "runtime/sim/simulator.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;

namespace {

SimulationReport run(const SimulationOptions& options, const std::string& policy) {
  Result<SimulationReport> report = simulate(options, policy);
  BOOST_TEST_REQUIRE(report.ok(), report.error());
  return std::move(report).value();
}

// A policy that never chooses, and one that always chooses the same unit.
class IdlePolicy : public SchedulingPolicy {
 public:
  std::string name() const override { return "idle"; }
  std::optional<Unit> choose(WorkerId, const MopBook&) override { return std::nullopt; }
};
class StubbornPolicy : public SchedulingPolicy {
 public:
  std::string name() const override { return "stubborn"; }
  std::optional<Unit> choose(WorkerId, const MopBook&) override { return Unit{0, 0, 0}; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(simulator)

BOOST_AUTO_TEST_CASE(lower_bound_of_a_hand_made_workload) {
  // Unit seconds = mflops x 3 x 1000 / (tflops x 1e6): config 0 takes 3 s on
  // worker 0 and 1.5 s on worker 1; config 1 three times that.
  Workload wl;
  wl.config_mflops = {1000, 3000};
  wl.worker_tflops = {1, 2};
  wl.holders = {{0}, {0, 1}};  // partition 0 only on worker 0
  wl.holdings = {{0, 1}, {1}};
  wl.examples_per_partition = 1000;
  wl.epochs = 2;
  BOOST_TEST(wl.unit_seconds(0, 0) == 3.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(wl.unit_seconds(1, 1) == 4.5, boost::test_tools::tolerance(1e-12));
  LowerBound lb = lower_bound(wl);
  // 8 units of config 0 at 3 s, 8 of config 1 at 9 s (speed 1) over speed 3.
  BOOST_TEST(lb.total_work_s == 16.0, boost::test_tools::tolerance(1e-12));
  // Config 1: partition 0 at 9 s (worker 0), partition 1 at 4.5 s (worker 1), twice.
  BOOST_TEST(lb.longest_chain_s == 27.0, boost::test_tools::tolerance(1e-12));
  // Worker 0 alone holds partition 0: 3 + 9 s per epoch.
  BOOST_TEST(lb.worker_load_s == 24.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(lb.seconds() == 27.0, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(workload_draws_like_the_paper) {
  SimulationOptions o;
  o.configs = 20000;
  o.workers = 400;
  o.replicas = 3;
  Workload wl = make_workload(o);
  double mean = std::accumulate(wl.config_mflops.begin(), wl.config_mflops.end(), 0.0) / o.configs;
  BOOST_TEST(mean == 5900.0, boost::test_tools::tolerance(0.03));
  BOOST_TEST(*std::min_element(wl.config_mflops.begin(), wl.config_mflops.end()) >= 360.0);
  BOOST_TEST(*std::max_element(wl.config_mflops.begin(), wl.config_mflops.end()) <= 21000.0);
  std::set<double> speeds(wl.worker_tflops.begin(), wl.worker_tflops.end());
  BOOST_TEST(speeds == (std::set<double>{5.6, 11.3, 12.1, 18.7}), boost::test_tools::per_element());
  BOOST_TEST(wl.examples_per_partition == o.examples / o.workers);
  for (PartitionId p = 0; p < o.workers; ++p) {
    const std::vector<WorkerId>& holders = wl.holders[p];
    BOOST_TEST(std::set<WorkerId>(holders.begin(), holders.end()).size() == 3u);
    BOOST_TEST((std::find(holders.begin(), holders.end(), p) != holders.end()));
    for (WorkerId w : holders) {
      BOOST_TEST((std::find(wl.holdings[w].begin(), wl.holdings[w].end(), p) != wl.holdings[w].end()));
    }
  }
  o.heterogeneity = Heterogeneity::uniform;
  wl = make_workload(o);
  for (double s : wl.worker_tflops) BOOST_TEST((s >= 5.6 && s <= 18.7));
  o.heterogeneity = Heterogeneity::none;
  wl = make_workload(o);
  BOOST_TEST(std::set<double>(wl.worker_tflops.begin(), wl.worker_tflops.end()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_options_name_the_flag) {
  auto error_of = [](void (*change)(SimulationOptions&)) {
    SimulationOptions o;
    change(o);
    return validate(o).message();
  };
  BOOST_TEST(validate(SimulationOptions{}).ok());
  BOOST_TEST(error_of([](SimulationOptions& o) { o.configs = 0; }).find("--configs") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.workers = -1; }).find("--workers") == 0u);
  // The event queue carries worker ids in 24 bits.
  BOOST_TEST(error_of([](SimulationOptions& o) {
               o.workers = (1 << 24) + 1;
             }).find("--workers: must be in 1..16777216") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.epochs = 0; }).find("--epochs") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.replicas = 9; }).find("--replicas: must be in 1..8") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.noise = -0.1; }).find("--noise") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.failure_rate = 1; }).find("--failure-rate") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.downtime_s = 0; }).find("--downtime") == 0u);
  BOOST_TEST(error_of([](SimulationOptions& o) { o.examples = 3; }).find("--examples") == 0u);
  BOOST_TEST(parse_heterogeneity("fast").error().find("paper, uniform, none") != std::string::npos);
  BOOST_TEST(*parse_heterogeneity("uniform") == Heterogeneity::uniform);
  Result<SimulationReport> bad_policy = simulate(SimulationOptions{}, "fifo");
  BOOST_TEST(bad_policy.error().find("--policy: unknown scheduling policy 'fifo'") == 0u);
  CEREBRO_CHECK_CONTRACT(Simulator(SimulationOptions{}, nullptr), "Simulator: no policy");
  SimulationOptions no_configs;
  no_configs.configs = 0;
  CEREBRO_CHECK_CONTRACT(Simulator(no_configs, make_policy(SchedulerKind::randomized, 1)), "Simulator: --configs");
}

BOOST_AUTO_TEST_CASE(a_policy_that_stalls_or_cheats_is_caught) {
  SimulationOptions o;
  o.configs = 3;
  o.workers = 2;
  o.epochs = 1;
  auto stalled = Simulator(o, std::make_unique<IdlePolicy>()).run();
  BOOST_TEST(stalled.status().is_internal());
  BOOST_TEST(stalled.error().find("stalled at t=0.0 s: 0 of 6 units") != std::string::npos, stalled.error());
  // A policy that picks a unit the book does not allow breaks MopBook's contract.
  CEREBRO_CHECK_CONTRACT(Simulator(o, std::make_unique<StubbornPolicy>()).run(), "MopBook::start");
}

// Random small clusters with replicas, noise and worker failures: every run
// of both policies finishes, its unit log keeps the MOP invariants, and the
// lower bound holds.
BOOST_AUTO_TEST_CASE(runs_keep_the_invariants_and_respect_the_lower_bound) {
  int64_t failed_attempts = 0, runs = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    SimulationOptions o;
    o.seed = seed;
    o.configs = in(1, 30);
    o.workers = in(1, 10);
    o.epochs = in(1, 4);
    o.replicas = in(1, std::min(3, o.workers));
    o.heterogeneity = static_cast<Heterogeneity>(in(0, 2));
    o.noise = in(0, 1) ? 0.3 : 0.0;
    o.failure_rate = in(0, 1) ? 0.05 : 0.0;
    o.downtime_s = in(1, 300);
    o.keep_log = true;
    for (const std::string& policy : policy_names()) {
      BOOST_TEST_CONTEXT("seed " << seed << ", " << policy << ": " << o.configs << " configs, " << o.workers
                                 << " workers, " << o.epochs << " epochs, replicas " << o.replicas) {
        SimulationReport r = run(o, policy);
        ++runs;
        failed_attempts += r.failed_attempts;
        Status invariants = check_mop_invariants(r.log, r.expected);
        BOOST_TEST(invariants.ok(), invariants.message());
        int64_t units = int64_t{o.configs} * o.workers * o.epochs;
        BOOST_TEST(r.units == units);
        BOOST_TEST(std::count_if(r.log.begin(), r.log.end(), [](const UnitRecord& u) { return u.committed; }) == units);
        for (const auto& [config, epochs] : r.expected.epochs_completed) BOOST_TEST(epochs == o.epochs);
        BOOST_TEST(r.bound.seconds() <= r.makespan_s * (1 + 1e-12));
        BOOST_TEST(r.ratio >= 1 - 1e-12);
        BOOST_TEST((r.utilization > 0 && r.utilization <= 1 + 1e-12));
        BOOST_TEST(r.decisions >= r.units);
        BOOST_TEST(r.decision_latency_p50_us > 0);
        BOOST_TEST(r.decision_latency_p99_us >= r.decision_latency_p50_us);
        BOOST_TEST(r.decision_latency_every == 1);  // small runs time every decision
      }
    }
  }
  BOOST_TEST(failed_attempts > 50);  // the failure path ran
  BOOST_TEST_MESSAGE(runs << " runs, " << failed_attempts << " attempts lost to failures");
}

BOOST_AUTO_TEST_CASE(same_seed_same_run) {
  SimulationOptions o;
  o.configs = 40;
  o.workers = 12;
  o.epochs = 3;
  o.replicas = 2;
  o.noise = 0.2;
  o.failure_rate = 0.02;
  o.keep_log = true;
  for (const std::string& policy : policy_names()) {
    BOOST_TEST_CONTEXT(policy) {
      SimulationReport a = run(o, policy), b = run(o, policy);
      BOOST_TEST(a.makespan_s == b.makespan_s);
      BOOST_TEST(a.decisions == b.decisions);
      BOOST_TEST(a.failed_attempts == b.failed_attempts);
      BOOST_TEST_REQUIRE(a.log.size() == b.log.size());
      for (size_t i = 0; i < a.log.size(); ++i) {
        BOOST_TEST_REQUIRE((Unit{a.log[i].config, a.log[i].partition, a.log[i].epoch} ==
                            Unit{b.log[i].config, b.log[i].partition, b.log[i].epoch}));
        BOOST_TEST_REQUIRE(a.log[i].worker == b.log[i].worker);
        BOOST_TEST_REQUIRE(a.log[i].start_s == b.log[i].start_s);
      }
      SimulationOptions other = o;
      other.seed = 2;
      BOOST_TEST(run(other, policy).makespan_s != a.makespan_s);
    }
  }
}

// The goal, on clusters small enough for a unit test: on
// heterogeneous workers critical_path is clearly better than randomized on
// average and (within noise) never worse on any seed.
BOOST_AUTO_TEST_CASE(critical_path_beats_randomized_on_heterogeneous_clusters) {
  struct Case {
    int32_t configs, workers, epochs;
    Heterogeneity heterogeneity;
  };
  for (Case c : {Case{16, 8, 10, Heterogeneity::paper}, Case{16, 8, 10, Heterogeneity::uniform},
                 Case{200, 48, 4, Heterogeneity::paper}, Case{200, 48, 4, Heterogeneity::uniform}}) {
    double randomized_sum = 0, critical_sum = 0;
    const int seeds = c.configs > 100 ? 4 : 12;
    for (int seed = 1; seed <= seeds; ++seed) {
      SimulationOptions o;
      o.configs = c.configs;
      o.workers = c.workers;
      o.epochs = c.epochs;
      o.heterogeneity = c.heterogeneity;
      o.seed = seed;
      double randomized = run(o, "randomized").ratio, critical = run(o, "critical_path").ratio;
      BOOST_TEST_CONTEXT(c.configs << " x " << c.workers << " " << to_string(c.heterogeneity) << ", seed " << seed
                                   << ": randomized " << randomized << ", critical_path " << critical) {
        BOOST_TEST(critical <= randomized + 0.02);
      }
      randomized_sum += randomized;
      critical_sum += critical;
    }
    double randomized_mean = randomized_sum / seeds, critical_mean = critical_sum / seeds;
    BOOST_TEST_MESSAGE(c.configs << " x " << c.workers << " " << to_string(c.heterogeneity)
                                 << ": mean ratio randomized " << randomized_mean << ", critical_path "
                                 << critical_mean);
    BOOST_TEST(critical_mean <= randomized_mean - 0.03);
    BOOST_TEST(critical_mean <= 1.05);
  }
}

// Heavy units to fast workers: two workers holding both partitions, one 4x
// slower; one config costs 5x the others. A slow worker that takes a unit of
// the heavy config stretches the run by a long way; critical_path learns the
// speeds and costs and leaves those units to the fast worker.
BOOST_AUTO_TEST_CASE(critical_path_leaves_heavy_units_to_the_fast_worker) {
  SimulationOptions o;
  o.configs = 4;
  o.workers = 2;
  o.epochs = 4;
  o.replicas = 2;
  double randomized_sum = 0, critical_sum = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    o.seed = seed;
    Workload wl;
    wl.config_mflops = {5000, 1000, 1000, 1000};
    std::rotate(wl.config_mflops.begin(), wl.config_mflops.begin() + seed % 4, wl.config_mflops.end());
    wl.worker_tflops = seed % 2 ? std::vector<double>{4, 16} : std::vector<double>{16, 4};
    wl.holders = {{0, 1}, {0, 1}};
    wl.holdings = {{0, 1}, {0, 1}};
    wl.examples_per_partition = 10000;
    wl.epochs = o.epochs;
    SimulationReport randomized = Simulator(o, wl, make_policy(SchedulerKind::randomized, seed)).run().value();
    SimulationReport critical = Simulator(o, wl, make_policy(SchedulerKind::critical_path, seed)).run().value();
    // Randomized is sometimes lucky; critical_path is never far off.
    BOOST_TEST_CONTEXT("seed " << seed << ": randomized " << randomized.ratio << ", critical_path " << critical.ratio) {
      BOOST_TEST(critical.ratio <= 1.25);
    }
    randomized_sum += randomized.ratio;
    critical_sum += critical.ratio;
  }
  double randomized_mean = randomized_sum / 10, critical_mean = critical_sum / 10;
  BOOST_TEST_MESSAGE("4 configs x 2 workers, one 4x slower: mean ratio randomized "
                     << randomized_mean << ", critical_path " << critical_mean);
  BOOST_TEST(critical_mean <= randomized_mean - 0.5);
  CEREBRO_CHECK_CONTRACT(Simulator(o, Workload{}, make_policy(SchedulerKind::randomized, 1)),
                         "the workload (0 configs, 0 workers, 0 epochs) does not match the options");
}

BOOST_AUTO_TEST_SUITE_END()
