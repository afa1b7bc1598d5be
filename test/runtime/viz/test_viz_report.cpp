#define BOOST_TEST_MODULE viz_report
// A real run's pictures, checked by independent readers: its TensorBoard
// event files decoded by test/scripts/check_tfevents.py (its own CRC-32C,
// protoc with a schema written from the documented .proto files), and
// `cerebro report` opened in headless Chromium by test/scripts/check_report.py
// (Selenium, the network cut off), which saves a screenshot as a test
// artifact (build/test-artifacts/report.png).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>
#include <set>

#include "runtime/store/state_store.hpp"
#include "test/support/e2e_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

std::string script(const std::string& name) { return std::string(CEREBRO_SOURCE_DIR) + "/test/scripts/" + name; }

// Debian's python3 (selenium comes from python3-selenium), not whichever python3 is first on PATH.
const char* const kPython = "/usr/bin/python3";

}  // namespace

BOOST_AUTO_TEST_CASE(a_runs_tensorboard_logs_and_report_read_back_independently) {
  TempDir tmp;
  // Four configs (two of them on a list-valued hyper-parameter), two workers, two epochs.
  auto spec = tmp.write("viz.toml", small_spec("model = [\"mlp\"]\nhidden = [[16], [32, 16]]\nlr = [0.002, 0.01]\n"));
  auto run_dir = tmp.file("run");
  auto ran = run_cerebro("run " + spec + " --out " + run_dir);
  BOOST_REQUIRE_MESSAGE(ran.exit_code == 0, ran.text);

  // TensorBoard: every record framed and checksummed, the sessions and scalars match summary.json.
  auto decoded = run_command(std::string(kPython) + " " + script("check_tfevents.py") + " " + run_dir);
  BOOST_REQUIRE_MESSAGE(decoded.exit_code == 0, decoded.text);
  auto digest = nlohmann::json::parse(decoded.text);
  BOOST_TEST(digest["configs"].size() == 4u);
  BOOST_TEST(digest["hparams"] == nlohmann::json({"hidden", "lr", "model"}));
  BOOST_TEST(digest["configs"]["0"]["steps"] == nlohmann::json({0, 1}));

  // The report.
  auto report = tmp.file("out/report.html");
  fs::create_directories(tmp.file("out"));
  auto made = run_cerebro("report " + run_dir + " --out " + report);
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.text);
  BOOST_TEST(made.text.find("4 configs, 16 units") != std::string::npos, made.text);
  // What the browser must find, from the store itself.
  nlohmann::json expect;
  {
    auto store = StateStore::open(run_dir + "/state", false);
    BOOST_REQUIRE(store.ok());
    auto log = (*store)->unit_log();
    std::set<WorkerId> workers;
    std::map<ConfigId, std::set<int32_t>> epochs;
    for (const auto& e : log) workers.insert(e.worker), epochs[e.config].insert(e.epoch);
    for (const auto& [config, es] : epochs) expect["configs"][std::to_string(config)] = es.size();
    expect["workers"] = workers.size();
    expect["units"] = log.size();
  }
  BOOST_TEST(expect["workers"] == 2);
  auto expect_file = tmp.write("expect.json", expect.dump());
  auto artifacts = fs::path(CEREBRO_BINARY_DIR) / "test-artifacts";
  fs::create_directories(artifacts);
  auto screenshot = (artifacts / "report.png").string();
  fs::remove(screenshot);
  auto browsed = run_command(std::string(kPython) + " " + script("check_report.py") + " " + report + " " + screenshot +
                             " " + expect_file);
  BOOST_REQUIRE_MESSAGE(browsed.exit_code == 0, browsed.text);
  auto seen = nlohmann::json::parse(browsed.text);
  BOOST_TEST(seen["lanes"] == 2);
  BOOST_TEST(seen["units"] == 16);
  BOOST_TEST(seen["curve-val_accuracy"] == 4);
  BOOST_TEST(fs::file_size(screenshot) > 10000u);

  // Without --out the report goes into the run directory; --tensorboard rewrites the logs.
  auto again = run_cerebro("report " + run_dir + " --tensorboard");
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, again.text);
  BOOST_TEST(fs::exists(run_dir + "/report.html"));
  BOOST_TEST(again.text.find("tensorboard: 5 event files") != std::string::npos, again.text);
  decoded = run_command(std::string(kPython) + " " + script("check_tfevents.py") + " " + run_dir);
  BOOST_TEST(decoded.exit_code == 0, decoded.text);
}

BOOST_AUTO_TEST_CASE(a_bad_run_directory_or_output_is_named_and_nothing_is_written) {
  TempDir tmp;
  auto missing = run_cerebro("report " + tmp.file("nope"));
  BOOST_TEST(missing.exit_code == 1);
  BOOST_TEST(missing.text.find(tmp.file("nope") + ": no such run directory") != std::string::npos, missing.text);
  auto not_a_run = run_cerebro("report " + tmp.path().string() + " --out " + tmp.file("r.html"));
  BOOST_TEST(not_a_run.exit_code == 1);
  BOOST_TEST(not_a_run.text.find("not a run directory") != std::string::npos, not_a_run.text);
  BOOST_TEST(!fs::exists(tmp.file("r.html")));
}
