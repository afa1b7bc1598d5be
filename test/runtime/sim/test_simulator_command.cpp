// `cerebro simulate`: flags parsed by the real subcommand definition, JSON and
// text reports, and errors naming the flag at fault.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "tools/commands/simulate.hpp"

using namespace cerebro;

namespace {

struct Outcome {
  int code = 0;
  std::string out, err;
};

// Parses `cerebro simulate ARGS...` and runs it.
Outcome run_cli(std::vector<std::string> args) {
  CLI::App app{"cerebro"};
  auto command = add_simulate_options(*app.add_subcommand("simulate"));
  args.insert(args.begin(), "simulate");
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  app.parse(args);
  BOOST_TEST_REQUIRE(command->parsed());
  std::ostringstream out, err;
  Outcome o;
  o.code = run_simulate_command(*command, out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(simulate_command)

BOOST_AUTO_TEST_CASE(json_report_has_the_issue_fields) {
  Outcome o = run_cli({"--configs", "12", "--workers", "4", "--epochs", "2", "--seed", "3", "--policy", "critical_path",
                       "--heterogeneity", "uniform", "--json"});
  BOOST_TEST_REQUIRE(o.code == 0, o.err);
  auto report = nlohmann::json::parse(o.out);
  for (const char* key : {"makespan", "lower_bound", "ratio", "utilization", "decision_latency_p50_us",
                          "decision_latency_p99_us", "decision_latency_every"}) {
    BOOST_TEST_CONTEXT(key) { BOOST_TEST(report.contains(key)); }
  }
  BOOST_TEST(report["policy"] == "critical_path");
  BOOST_TEST(report["heterogeneity"] == "uniform");
  BOOST_TEST(report["units"] == 12 * 4 * 2);
  BOOST_TEST(report["ratio"].get<double>() >= 1.0);
  BOOST_TEST(report["makespan"].get<double>() >= report["lower_bound"].get<double>());
}

BOOST_AUTO_TEST_CASE(policy_all_compares_every_policy_on_one_workload) {
  Outcome o = run_cli({"--configs", "6", "--workers", "3", "--epochs", "1", "--policy", "all", "--json",
                       "--heterogeneity", "none", "--replicas", "2", "--failure-rate", "0.1"});
  BOOST_TEST_REQUIRE(o.code == 0, o.err);
  auto reports = nlohmann::json::parse(o.out);
  BOOST_TEST_REQUIRE(reports.size() == 2u);
  BOOST_TEST(reports[0]["policy"] == "randomized");
  BOOST_TEST(reports[1]["policy"] == "critical_path");
  BOOST_TEST(reports[0]["lower_bound"] == reports[1]["lower_bound"]);
}

BOOST_AUTO_TEST_CASE(text_report_names_each_figure) {
  Outcome o = run_cli({"--configs", "4", "--workers", "2", "--epochs", "1"});
  BOOST_TEST_REQUIRE(o.code == 0, o.err);
  for (const char* word : {"policy critical_path", "makespan", "lower bound", "ratio", "utilization", "latency p50"}) {
    BOOST_TEST_CONTEXT(word) { BOOST_TEST(o.out.find(word) != std::string::npos); }
  }
}

BOOST_AUTO_TEST_CASE(bad_input_is_an_error_naming_the_flag) {
  Outcome o = run_cli({"--heterogeneity", "fast"});
  BOOST_TEST(o.code == 1);
  BOOST_TEST(o.err.find("error: --heterogeneity: unknown value 'fast'") == 0u);
  o = run_cli({"--policy", "fifo"});
  BOOST_TEST(o.code == 1);
  BOOST_TEST(o.err.find("--policy") != std::string::npos);
  BOOST_TEST(o.err.find("randomized, critical_path") != std::string::npos);
  o = run_cli({"--replicas", "3", "--workers", "2"});
  BOOST_TEST(o.code == 1);
  BOOST_TEST(o.err.find("--replicas") != std::string::npos);
  BOOST_TEST(o.out.empty());
}

BOOST_AUTO_TEST_SUITE_END()
