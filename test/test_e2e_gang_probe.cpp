#define BOOST_TEST_MODULE end_to_end_gang_probe
// `cerebro allreduce-probe` (issue 14): the real executable measures a
// config's gradient allreduce over c10d Gloo between ranks on loopback, and
// refuses bad input naming the flag.
#include <boost/test/unit_test.hpp>

#include "test/e2e_util.hpp"

using namespace cerebro::e2e;

BOOST_AUTO_TEST_CASE(the_probe_measures_an_allreduce_per_step) {
  Output out = run_cerebro(R"(allreduce-probe --params '{"model": "mlp", "hidden": [32]}' --ranks 2 --repeats 5 --json)");
  BOOST_TEST_REQUIRE(out.exit_code == 0, out.text);
  auto report = nlohmann::json::parse(out.text);
  BOOST_TEST(report["ranks"] == 2);
  BOOST_TEST(report["allreduce_s"].get<double>() > 0);
}

BOOST_AUTO_TEST_CASE(bad_probe_input_names_the_flag) {
  Output ranks = run_cerebro("allreduce-probe --ranks 1");
  BOOST_TEST(ranks.exit_code != 0);
  BOOST_TEST(ranks.text.find("--ranks: a gang needs at least 2 ranks, got 1") != std::string::npos, ranks.text);
  Output params = run_cerebro(R"(allreduce-probe --params '{"model": "cnn", "bogus": 1}')");
  BOOST_TEST(params.exit_code != 0);
  BOOST_TEST(params.text.find("--params: unknown hyper-parameter bogus") != std::string::npos, params.text);
}
