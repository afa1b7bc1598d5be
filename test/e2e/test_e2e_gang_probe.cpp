#define BOOST_TEST_MODULE end_to_end_gang_probe
// `cerebro allreduce-probe`: the real executable measures a
// config's gradient allreduce over c10d Gloo between ranks on loopback, and
// refuses bad input naming the flag.
#include <boost/test/unit_test.hpp>

#include <cstdio>

#include "test/support/e2e_util.hpp"

using namespace cerebro::e2e;

BOOST_AUTO_TEST_CASE(the_probe_measures_an_allreduce_per_step) {
  Output out =
      run_cerebro(R"(allreduce-probe --params '{"model": "mlp", "hidden": [32]}' --ranks 2 --repeats 5 --json)");
  BOOST_TEST_REQUIRE(out.exit_code == 0, out.text);
  auto report = nlohmann::json::parse(out.text);
  BOOST_TEST(report["ranks"] == 2);
  BOOST_TEST(report["allreduce_s"].get<double>() > 0);
}

// --train: where a gang rank's time goes against MOP, every variant timed.
BOOST_AUTO_TEST_CASE(the_probe_profiles_a_gangs_training_against_mop) {
  Output out = run_cerebro(
      R"(allreduce-probe --params '{"model": "mlp", "hidden": [32]}' --ranks 2 --train 256 --rounds 1 --json)");
  BOOST_TEST_REQUIRE(out.exit_code == 0, out.text);
  auto report = nlohmann::json::parse(out.text);
  for (const char* variant : {"mop", "half", "half_at_once", "gang", "two_configs"})
    BOOST_TEST(report["median_s"][variant].get<double>() > 0, variant);
  BOOST_TEST(report["gang_steps"] == 8);  // 256 examples in shares of 32
  BOOST_TEST(report["ratio"].get<double>() > 0);
}

BOOST_AUTO_TEST_CASE(bad_probe_input_names_the_flag) {
  Output ranks = run_cerebro("allreduce-probe --ranks 1");
  BOOST_TEST(ranks.exit_code != 0);
  BOOST_TEST(ranks.text.find("--ranks: a gang needs at least 2 ranks, got 1") != std::string::npos, ranks.text);
  Output params = run_cerebro(R"(allreduce-probe --params '{"model": "cnn", "bogus": 1}')");
  BOOST_TEST(params.exit_code != 0);
  BOOST_TEST(params.text.find("--params: unknown hyper-parameter bogus") != std::string::npos, params.text);
}

// A gang spanning two processes on loopback: rank 0 prints its store's port
// (what the coordinator passes on), rank 1 joins with it; both allreduce.
BOOST_AUTO_TEST_CASE(a_gang_spans_two_processes_on_loopback) {
  const std::string params = R"('{"model": "mlp", "hidden": [32]}')";
  FILE* rank0 =
      popen((cerebro_binary() + " allreduce-probe --params " + params + " --ranks 2 --rank 0 --repeats 5 --json 2>&1")
                .c_str(),
            "r");
  BOOST_TEST_REQUIRE(rank0 != nullptr);
  char line[256] = {};
  BOOST_TEST_REQUIRE(fgets(line, sizeof line, rank0) != nullptr);
  int port = 0;
  BOOST_TEST_REQUIRE(std::sscanf(line, "store port %d", &port) == 1, line);
  Output rank1 = run_cerebro("allreduce-probe --params " + params + " --ranks 2 --rank 1 --store-port " +
                             std::to_string(port) + " --repeats 5 --json");
  std::string rest;
  while (fgets(line, sizeof line, rank0)) rest += line;
  int status = pclose(rank0);
  BOOST_TEST_REQUIRE(rank1.exit_code == 0, rank1.text);
  BOOST_TEST_REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0), rest);
  BOOST_TEST(nlohmann::json::parse(rank1.text)["allreduce_s"].get<double>() > 0);
  BOOST_TEST(nlohmann::json::parse(rest)["rank"] == 0);
}

BOOST_AUTO_TEST_CASE(a_joining_rank_needs_the_port) {
  Output out = run_cerebro("allreduce-probe --ranks 2 --rank 1");
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("--store-port: rank > 0 needs the port rank 0 printed") != std::string::npos, out.text);
}
