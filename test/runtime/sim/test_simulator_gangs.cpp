// The simulator with Hyperband's rung barriers and data-parallel gangs:
// the unit log keeps the MOP invariants with gangs (each gang's
// units once, one attempt), gangs shorten the tail that MOP leaves to one
// worker at a time, and `cerebro simulate` reports and validates them.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/sim/simulator.hpp"
#include "tools/commands/simulate.hpp"

using namespace cerebro;

namespace {

SimulationReport run(const SimulationOptions& options, const std::string& policy = "critical_path") {
  Result<SimulationReport> report = simulate(options, policy);
  BOOST_TEST_REQUIRE(report.ok(), report.error());
  return std::move(report).value();
}

SimulationOptions hyperband(int32_t workers, Parallelism parallelism) {
  SimulationOptions o;
  o.workers = workers;
  o.configs = 1;  // one Hyperband iteration
  o.epochs = 9;   // R = 9, eta = 3: brackets of 9, 5 and 3 configs
  o.search = SimulatedSearch::hyperband;
  o.parallelism = parallelism;
  o.keep_log = true;
  return o;
}

int32_t cli(std::vector<std::string> args, std::string& out, std::string& err) {
  CLI::App app{"cerebro"};
  auto command = add_simulate_options(*app.add_subcommand("simulate"));
  args.insert(args.begin(), "simulate");
  std::reverse(args.begin(), args.end());
  app.parse(args);
  std::ostringstream o, e;
  int32_t code = run_simulate_command(*command, o, e);
  out = o.str();
  err = e.str();
  return code;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(simulator_gangs)

BOOST_AUTO_TEST_CASE(hyperband_brackets_and_their_promotions) {
  BOOST_TEST(hyperband_configs(9, 3) == 9 + 5 + 3);
  BOOST_TEST(hyperband_configs(27, 3) == 27 + 12 + 6 + 4);
  SimulationOptions o = hyperband(4, Parallelism::mop);
  o.configs = 18;  // rounds up to two iterations
  BOOST_TEST(effective_options(o).configs == 34);
  Workload wl = make_workload(effective_options(o));
  BOOST_TEST_REQUIRE(wl.config_epochs.size() == 34u);
  // Bracket 0 of each iteration: 9 configs at 1 epoch, 3 promoted to 3, 1 to 9.
  std::vector<int32_t> first(wl.config_epochs.begin(), wl.config_epochs.begin() + 9);
  BOOST_TEST(std::count(first.begin(), first.end(), 1) == 6);
  BOOST_TEST(std::count(first.begin(), first.end(), 3) == 2);
  BOOST_TEST(std::count(first.begin(), first.end(), 9) == 1);
  BOOST_TEST(wl.bracket_rungs[0] == (std::vector<int32_t>{1, 3}), boost::test_tools::per_element());
  BOOST_TEST(wl.bracket_rungs[2].empty());  // the last bracket: 3 configs, all 9 epochs
}

BOOST_AUTO_TEST_CASE(hyperband_with_mop_keeps_the_invariants_and_its_barriers) {
  SimulationReport r = run(hyperband(6, Parallelism::mop));
  BOOST_TEST(r.gangs == 0);
  Status s = check_mop_invariants(r.log, r.expected);
  BOOST_TEST(s.ok(), s.message());
  // Rung barrier: no config of bracket 0 starts epoch 1 before all 9 finished epoch 0.
  Workload wl = make_workload(effective_options(hyperband(6, Parallelism::mop)));
  double last_epoch0_end = 0, first_epoch1_start = 1e300;
  for (const UnitRecord& u : r.log) {
    if (!u.committed || wl.config_bracket[u.config] != 0) continue;
    if (u.epoch == 0) last_epoch0_end = std::max(last_epoch0_end, u.end_s);
    if (u.epoch == 1) first_epoch1_start = std::min(first_epoch1_start, u.start_s);
  }
  BOOST_TEST(last_epoch0_end <= first_epoch1_start);
}

BOOST_AUTO_TEST_CASE(gangs_keep_the_invariants_and_cover_each_unit_once) {
  for (Parallelism mode : {Parallelism::automatic, Parallelism::data}) {
    BOOST_TEST_CONTEXT(to_string(mode)) {
      SimulationReport r = run(hyperband(8, mode));
      BOOST_TEST(r.gangs > 0);
      Status s = check_mop_invariants(r.log, r.expected);
      BOOST_TEST(s.ok(), s.message());
      int64_t gang_records =
          std::count_if(r.log.begin(), r.log.end(), [](const UnitRecord& u) { return u.committed && u.gang > 0; });
      BOOST_TEST(gang_records == r.gang_units);
      BOOST_TEST(r.units == static_cast<int64_t>(std::count_if(r.log.begin(), r.log.end(),
                                                               [](const UnitRecord& u) { return u.committed; })));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_failed_member_fails_the_gang_and_its_units_run_again) {
  SimulationOptions o = hyperband(8, Parallelism::data);
  o.failure_rate = 0.05;
  o.downtime_s = 30;
  SimulationReport r = run(o);
  int64_t failed_gang_records =
      std::count_if(r.log.begin(), r.log.end(), [](const UnitRecord& u) { return !u.committed && u.gang > 0; });
  BOOST_TEST(failed_gang_records > 0);
  Status s = check_mop_invariants(r.log, r.expected);  // every unit once, none half-committed
  BOOST_TEST(s.ok(), s.message());
}

BOOST_AUTO_TEST_CASE(auto_gangs_shorten_a_hyperband_tail_and_never_lose_much) {
  // 64 workers, R = 27: the top rungs keep one to four configs.
  SimulationOptions o = hyperband(64, Parallelism::mop);
  o.epochs = 27;
  o.keep_log = false;
  SimulationReport mop = run(o);
  o.parallelism = Parallelism::automatic;
  SimulationReport gangs = run(o);
  BOOST_TEST(gangs.gangs > 0);
  BOOST_TEST(gangs.makespan_s < 0.8 * mop.makespan_s);
  BOOST_TEST(mop.ratio >= 1.0);
  // A wide fixed experiment (many configs per worker) leaves no room: auto stays MOP-like.
  SimulationOptions wide;
  wide.configs = 64;
  wide.workers = 8;
  wide.epochs = 2;
  SimulationReport wide_mop = run(wide);
  wide.parallelism = Parallelism::automatic;
  SimulationReport wide_auto = run(wide);
  BOOST_TEST(wide_auto.makespan_s <= 1.05 * wide_mop.makespan_s);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_gangs) {
  SimulationReport a = run(hyperband(8, Parallelism::automatic));
  SimulationReport b = run(hyperband(8, Parallelism::automatic));
  BOOST_TEST(a.makespan_s == b.makespan_s);
  BOOST_TEST(a.gangs == b.gangs);
}

BOOST_AUTO_TEST_CASE(simulate_compare_reports_mop_and_auto) {
  std::string out, err;
  int32_t code = cli({"--workers", "16", "--search", "hyperband", "--epochs", "9", "--configs", "1", "--parallelism",
                      "compare", "--json"},
                     out, err);
  BOOST_TEST_REQUIRE(code == 0, err);
  auto reports = nlohmann::json::parse(out);
  BOOST_TEST_REQUIRE(reports.size() == 2u);
  BOOST_TEST(reports[0]["parallelism"] == "mop");
  BOOST_TEST(reports[1]["parallelism"] == "auto");
  BOOST_TEST(reports[0]["search"] == "hyperband");
  BOOST_TEST(reports[0]["configs"] == 17);
  for (const char* key : {"gangs", "gang_units", "lower_bound_with_gangs", "ratio_gang_bound"}) {
    BOOST_TEST_CONTEXT(key) { BOOST_TEST(reports[1].contains(key)); }
  }
  BOOST_TEST(reports[1]["gangs"].get<int64_t>() > 0);
  BOOST_TEST(reports[0]["lower_bound"] == reports[1]["lower_bound"]);  // the same workload
}

BOOST_AUTO_TEST_CASE(bad_gang_input_is_an_error_naming_the_flag) {
  std::string out, err;
  BOOST_TEST(cli({"--parallelism", "gangs"}, out, err) == 1);
  BOOST_TEST(err.find("--parallelism: unknown value 'gangs' (known: auto, mop, data, compare)") != std::string::npos,
             err);
  BOOST_TEST(cli({"--search", "asha"}, out, err) == 1);
  BOOST_TEST(err.find("--search: unknown value 'asha'") != std::string::npos, err);
  // A gang larger than the workers holding partitions.
  BOOST_TEST(cli({"--workers", "4", "--parallelism", "data", "--max-gang", "5"}, out, err) == 1);
  BOOST_TEST(err.find("--max-gang: a gang needs 2 .. 4 workers") != std::string::npos, err);
  BOOST_TEST(cli({"--parallelism", "auto", "--allreduce-s", "-1"}, out, err) == 1);
  BOOST_TEST(err.find("--allreduce-s") != std::string::npos, err);
  BOOST_TEST(cli({"--batch-size", "0"}, out, err) == 1);
  BOOST_TEST(err.find("--batch-size") != std::string::npos, err);
}

BOOST_AUTO_TEST_SUITE_END()
