// Simulating a real run from its unit log (runtime/sim/from_run.hpp).
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "runtime/sim/from_run.hpp"

using namespace cerebro;

namespace {

UnitLogEntry unit(ConfigId c, PartitionId p, int32_t epoch, WorkerId w, double start, double end) {
  UnitLogEntry e;
  e.config = c;
  e.partition = p;
  e.epoch = epoch;
  e.worker = w;
  e.start_s = start;
  e.end_s = end;
  e.examples = 100;
  return e;
}

// Two workers (ids 4 and 9) holding both partitions; config 7 takes 4 s a
// unit, config 2 takes 1 s; one epoch. The real run left a tail: config 7's
// second unit started only after config 2 was done.
std::vector<UnitLogEntry> two_configs() {
  return {unit(2, 0, 0, 4, 0, 1), unit(2, 1, 0, 9, 0, 1), unit(7, 0, 0, 4, 1, 5), unit(7, 1, 0, 9, 5, 9)};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(simulate_from_run)

BOOST_AUTO_TEST_CASE(the_log_becomes_the_workload) {
  CostPriors priors;
  BOOST_REQUIRE(priors.set(7, 4e-2).ok());
  BOOST_REQUIRE(priors.set(2, 1e-2).ok());
  BOOST_REQUIRE(priors.set(5, 1.0).ok());  // a config without units: not simulated
  auto run = workload_from_log(two_configs(), priors, 3);
  BOOST_REQUIRE_MESSAGE(run.ok(), run.error());
  BOOST_TEST(run->options.configs == 2);
  BOOST_TEST(run->options.workers == 2);
  BOOST_TEST(run->options.epochs == 1);
  BOOST_TEST(run->workload.num_partitions() == 2);
  BOOST_TEST(run->configs == (std::vector<ConfigId>{2, 7}), boost::test_tools::per_element());
  BOOST_TEST(run->workers == (std::vector<WorkerId>{4, 9}), boost::test_tools::per_element());
  BOOST_TEST(run->workload.unit_seconds(0, 0) == 1.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(run->workload.unit_seconds(1, 1) == 4.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(run->real_makespan_s == 9.0);
  // The priors move with their configs to the simulated ids.
  BOOST_TEST(run->priors.all().size() == 2u);
  BOOST_TEST(run->priors.seconds_per_example(0).value() == 1e-2);
  BOOST_TEST(run->priors.seconds_per_example(1).value() == 4e-2);
  // With the prior the policy starts config 7 first: 4 + 4 s on the chain,
  // config 2's units beside it.
  auto compared = simulate_run(*run, "critical_path");
  BOOST_REQUIRE_MESSAGE(compared.ok(), compared.error());
  BOOST_TEST(compared->simulated.makespan_s == 8.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(compared->real_makespan_s == 9.0);
  BOOST_TEST(compared->ratio == 8.0 / 9.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(!simulate_run(*run, "fifo").ok());
}

BOOST_AUTO_TEST_CASE(runs_that_are_not_whole_fixed_epochs_are_refused) {
  BOOST_TEST(!workload_from_log({}, CostPriors{}, 1).ok());
  auto missing = two_configs();
  missing.pop_back();
  auto refused = workload_from_log(missing, CostPriors{}, 1);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.error().find("config 7") != std::string::npos);
  auto uneven = two_configs();
  uneven.push_back(unit(2, 0, 1, 4, 9, 10));
  uneven.push_back(unit(2, 1, 1, 9, 10, 11));
  auto early_stop = workload_from_log(uneven, CostPriors{}, 1);
  BOOST_REQUIRE(!early_stop.ok());
  BOOST_TEST(early_stop.error().find("same epochs") != std::string::npos);
}

// `simulate --priors`: the policy knows every config's cost before the run,
// so worker 0's first unit is the heaviest config's (without priors, the
// configs are measured in id order: config 0 first).
BOOST_AUTO_TEST_CASE(with_priors_the_heaviest_config_starts_first) {
  SimulationOptions o;
  o.configs = 16;
  o.workers = 8;
  o.epochs = 2;
  o.seed = 4;
  o.keep_log = true;
  Workload workload = make_workload(o);
  ConfigId heaviest = static_cast<ConfigId>(
      std::max_element(workload.config_mflops.begin(), workload.config_mflops.end()) - workload.config_mflops.begin());
  BOOST_REQUIRE(heaviest != 0);
  auto first_on_worker_0 = [](const SimulationReport& r) {
    ConfigId first = -1;
    for (const auto& u : r.log)
      if (u.worker == 0 && u.start_s == 0) first = u.config;
    return first;
  };
  auto blind = simulate(o, "critical_path");
  BOOST_REQUIRE(blind.ok());
  BOOST_TEST(first_on_worker_0(*blind) == 0);
  BOOST_TEST(blind->to_json()["priors"] == false);
  o.priors = true;
  auto informed = simulate(o, "critical_path");
  BOOST_REQUIRE(informed.ok());
  BOOST_TEST(first_on_worker_0(*informed) == heaviest);
  BOOST_TEST(informed->to_json()["priors"] == true);
  BOOST_TEST(informed->ratio >= 1.0);
}

BOOST_AUTO_TEST_SUITE_END()
