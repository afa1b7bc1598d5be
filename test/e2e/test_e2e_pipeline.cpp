// Pipeline configs in real runs through the `cerebro` executable:
// a config forced to parallelism = "pipeline" next to an ordinary one, a
// model over [cluster] model_memory_mb, a stage that fails (the attempt is
// requeued whole), and a pipeline whose stages span two agent processes.
// Small on purpose (a few hundred examples): seconds each.
#define BOOST_TEST_MODULE e2e_pipeline
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <set>

#include "test/support/cluster_util.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;
namespace fs = std::filesystem;

namespace {

// The pipeline config's entries say so (2 stages, on 2 distinct workers,
// the driver first); the others trained alone, but for `also_pipelines`.
void check_pipeline_entries(const std::vector<UnitLogEntry>& log, ConfigId pipeline,
                            const std::set<ConfigId>& also_pipelines = {}) {
  for (const auto& e : log) {
    if (also_pipelines.count(e.config) && e.config != pipeline) continue;
    if (e.config != pipeline) {
      BOOST_TEST(e.pipeline_workers.empty(), "config " << e.config << " p" << e.partition << " e" << e.epoch);
      continue;
    }
    BOOST_TEST_REQUIRE(e.pipeline_workers.size() == 2u, "p" << e.partition << " e" << e.epoch);
    BOOST_TEST(e.pipeline_workers[0] == e.worker);
    BOOST_TEST(e.pipeline_workers[1] != e.worker);
    BOOST_TEST(trained_as(e).rfind("pipeline over 2 stages (workers ", 0) == 0, trained_as(e));
  }
}

ConfigId config_with(const nlohmann::json& summary, const std::string& key, const std::string& value) {
  for (const auto& c : summary["configs"])
    if (c["params"].contains(key) && c["params"][key] == value) return c["id"].get<ConfigId>();
  BOOST_FAIL("no config with " + key + " = " + value);
  return -1;
}

}  // namespace

// (i) and (ii): run setup accepts the forced pipeline config, both configs
// train to the end on 2 workers, each unit once, the pipeline config's
// entries and summary say how it trained, and its epochs validated (its
// framed state evaluates).
BOOST_AUTO_TEST_CASE(a_forced_pipeline_config_and_an_ordinary_one_train_to_the_end) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto spec = tmp.write(
      "p.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"auto\", \"pipeline\"]\n", 2, 400, 2));
  auto out = run_cerebro("run " + spec + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("trains as a pipeline over 2 stages") != std::string::npos);
  auto summary = read_json(run + "/summary.json");
  const ConfigId pipeline = config_with(summary, "parallelism", "pipeline");
  auto log = open_store(run)->unit_log();
  check_complete_run(log, 2, 2, 2);
  check_pipeline_entries(log, pipeline);
  for (const auto& c : summary["configs"]) {
    BOOST_TEST(c["status"] == "completed");
    BOOST_TEST(c["epochs"].size() == 2u);
    if (c["id"] == pipeline) {
      BOOST_TEST(c["training"]["pipeline"] == "pipeline over 2 stages");
      BOOST_TEST(c["training"]["pipeline_units"] == 4);
      BOOST_TEST(c["training"]["units_alone"] == 0);
      BOOST_TEST(c["epochs"][1]["val_accuracy"].get<double>() > 0.15);  // chance: 0.1
    } else {
      BOOST_TEST(!c["training"].contains("pipeline"));
    }
  }
  BOOST_TEST(!summary["best"].is_null());
  auto units = run_cerebro("show " + run + " --units");
  BOOST_TEST(units.text.find("pipeline over 2 stages (workers ") != std::string::npos, units.text);
}

// (iii) A model over [cluster] model_memory_mb (mlp 784-256-256-10 under
// Adam: about 4.1 MB of training state, over a 4 MB budget; its largest
// stage, fc0, about 3.1 MB) trains to the end as a pipeline; its final state
// scores on the test set and exports as the whole model.
BOOST_AUTO_TEST_CASE(a_model_over_the_budget_trains_to_the_end_as_a_pipeline) {
  TempDir tmp;
  auto run = tmp.file("run");
  std::string text = small_spec("model = [\"mlp\"]\nhidden = [[256, 256]]\n", 2, 400, 2);
  text.replace(text.find("[cluster]\n"), 10, "[cluster]\nmodel_memory_mb = 4\n");
  auto out = run_cerebro("run " + tmp.write("big.toml", text) + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("exceeds [cluster] model_memory_mb") != std::string::npos);
  auto log = open_store(run)->unit_log();
  check_complete_run(log, 1, 2, 2);
  check_pipeline_entries(log, 0);
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.3);
  BOOST_TEST(summary["best"]["model_file"] == "best_model.pt");
  BOOST_TEST(fs::exists(run + "/best_model.pt"));
  // Even split, no worker holds it: a clear error naming the key.
  text.replace(text.find("model_memory_mb = 4"), 19, "model_memory_mb = 2");
  auto refused = run_cerebro("run " + tmp.write("too-big.toml", text) + " --out " + tmp.file("refused"));
  BOOST_TEST(refused.exit_code != 0);
  BOOST_TEST(refused.text.find("[cluster] model_memory_mb: the model's training state") != std::string::npos,
             refused.text);
}

// (iv) A stage fails (the test's fail_unit rule fails the unit's stage host):
// the attempt commits nothing, the unit is pending again from the config's
// last durable state, the host rejoins, and the run still finishes with
// every unit once.
BOOST_AUTO_TEST_CASE(a_failing_stage_requeues_the_unit_and_the_run_finishes) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto spec =
      tmp.write("p.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"pipeline\"]\n", 2, 400, 2));
  auto out = run_command(with_faults("fail_unit=0:1:0") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("stage 1: injected fault (test)") != std::string::npos);
  BOOST_TEST(out.text.find("failed (attempt 1 of") != std::string::npos);
  auto log = open_store(run)->unit_log();
  check_complete_run(log, 1, 2, 2);
  check_pipeline_entries(log, 0);
}

namespace {

struct CrashedThenResumed {
  std::string first_output;          // the killed run's
  std::vector<UnitLogEntry> before;  // its unit log when it died
};

// Runs `spec` into `run`, killed right after its 3rd commit, then resumes it
// to the end.
CrashedThenResumed crash_after_third_commit_and_resume(const std::string& spec, const std::string& run) {
  auto first = run_command(with_faults("crash=after_commit:3") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  CrashedThenResumed out{first.text, open_store(run)->unit_log()};
  // The 3rd commit was durable (a group commit may have written more with it).
  BOOST_REQUIRE(out.before.size() >= 3u);
  BOOST_REQUIRE(out.before.size() < 8u);
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  return out;
}

}  // namespace

// A run killed after its 3rd commit resumes: the pipeline config keeps its
// split (meta pipeline_stages) and trains on from its framed state; no unit
// runs twice.
BOOST_AUTO_TEST_CASE(a_pipeline_run_killed_mid_way_resumes) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto spec = tmp.write(
      "p.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"auto\", \"pipeline\"]\n", 2, 400, 2));
  const auto before = crash_after_third_commit_and_resume(spec, run).before;
  auto log = open_store(run)->unit_log();
  check_complete_run(log, 2, 2, 2);
  for (size_t i = 0; i < before.size(); ++i) BOOST_TEST(log[i].state_checksum == before[i].state_checksum);
  auto summary = read_json(run + "/summary.json");
  check_pipeline_entries(log, config_with(summary, "parallelism", "pipeline"));
  BOOST_TEST(summary["resumes"] == 1);
}

// Configs that tpe proposes while the run trains are planned like
// the run's own. Forced to parallelism = "pipeline", each trains over 2
// stages from its first unit (before, each was refused and failed). The run
// is killed after its 3rd commit and resumes with their splits (meta
// pipeline_stages): every unit once, every entry a pipeline's.
BOOST_AUTO_TEST_CASE(configs_tpe_proposes_mid_run_train_as_pipelines_and_resume) {
  TempDir tmp;
  auto run = tmp.file("run");
  std::string text = small_spec(
      "model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"pipeline\"]\n"
      "lr = { dist = \"loguniform\", low = 1e-3, high = 3e-2 }\n",
      2, 400, 2);
  text.replace(text.find("[data]"), 6, "search = \"tpe\"\nsamples = 2\nstartup = 2\n[data]");
  auto spec = tmp.write("tpe.toml", text);
  const std::string first = crash_after_third_commit_and_resume(spec, run).first_output;
  BOOST_TEST(first.find("proposed by tpe") != std::string::npos);
  BOOST_TEST(first.find("it trains as a pipeline over 2 stages") != std::string::npos);
  auto log = open_store(run)->unit_log();
  check_complete_run(log, 2, 2, 2);
  for (ConfigId c : {0, 1}) check_pipeline_entries(log, c, {0, 1});
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["resumes"] == 1);
  BOOST_REQUIRE_EQUAL(summary["configs"].size(), 2u);
  for (const auto& c : summary["configs"]) {
    BOOST_TEST(c["status"] == "completed");
    BOOST_TEST(c["training"]["pipeline"] == "pipeline over 2 stages");
    BOOST_TEST(c["training"]["pipeline_units"] == 4);
  }
}

// A pipeline config whose crew is larger than the cluster does not
// wait in silence. A run planned on 2 workers is killed after its 2nd commit
// and resumed embedded on 1 worker, where no worker can join: the pipeline
// config fails at once, naming why, and the ordinary config trains to the
// end (before, the resumed run waited for ever).
BOOST_AUTO_TEST_CASE(a_pipeline_config_resumed_on_fewer_workers_than_stages_fails_and_the_rest_trains) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto spec = tmp.write(
      "p.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"auto\", \"pipeline\"]\n", 2, 400, 2));
  auto first = run_command(with_faults("crash=after_commit:2") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  auto resumed = run_command("timeout 120 " + cerebro_binary() + " run --resume " + run + " --workers 1");
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  BOOST_TEST(resumed.text.find("failed: it trains as a pipeline over 2 stages, but the cluster has 1 worker and no "
                               "more can join") != std::string::npos);
  auto summary = read_json(run + "/summary.json");
  const ConfigId pipeline = config_with(summary, "parallelism", "pipeline");
  for (const auto& c : summary["configs"]) {
    if (c["id"] == pipeline) {
      BOOST_TEST(c["status"] == "failed");
      BOOST_TEST(c.value("error", std::string()).find("over 2 stages") != std::string::npos, c.dump());
    } else {
      BOOST_TEST(c["status"] == "completed");
      BOOST_TEST(c["epochs"].size() == 2u);
    }
  }
}

// (v) A coordinator and two agent processes with one worker each on
// loopback: every unit of the pipeline config takes both workers, so its
// stage 1 runs in the other agent's process than its driver, and the
// activations and gradients cross between them.
BOOST_AUTO_TEST_CASE(a_pipeline_spans_two_agent_processes) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  cluster.start_with_agents(port, {"node1", "node2"});
  std::string text = small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = [\"pipeline\"]\n", 2, 400, 2);
  text.replace(text.find("workers = 2\n"), 12, "replication = 2\n");
  auto out =
      run_cerebro("run " + tmp.write("p.toml", text) + cluster.client_flags(port) + " --out " + tmp.file("client-run"));
  BOOST_TEST_INFO(out.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto summary = read_json(tmp.file("client-run") + "/summary.json");
  BOOST_TEST(summary["workers"] == 2);
  BOOST_TEST(summary["configs"][0]["training"]["pipeline_units"] == 4);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.3);
  std::string dir;
  for (const auto& e : fs::directory_iterator(tmp.file("state") + "/experiments")) dir = e.path().string();
  BOOST_REQUIRE(!dir.empty());
  auto log = open_store(dir)->unit_log();
  check_complete_run(log, 1, 2, 2);
  check_pipeline_entries(log, 0);
}
