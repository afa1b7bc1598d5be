// search = "tpe" end to end with the real `cerebro` executable on a small
// Fashion-MNIST subset: plain TPE, TPE with ASHA, their replays, a run killed
// mid-search and resumed, warm start (tpe and random) and its bad inputs.
#define BOOST_TEST_MODULE end_to_end_tpe
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <fmt/format.h>

#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/store/state_store.hpp"
#include "test/support/cluster_util.hpp"
#include "test/support/e2e_util.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

const std::string kSpace =
    "model = [\"mlp\"]\nhidden = [[16], [32]]\nlr = { dist = \"loguniform\", low = 1e-4, high = 3e-2 }\n"
    "dropout = { dist = \"uniform\", low = 0.0, high = 0.3 }\n";

std::string spec_for(const std::string& experiment, const std::string& space = kSpace) {
  return "[experiment]\n" + experiment + "seed = 5\n[data]\nsource = \"idx\"\npath = \"" + fashion_mnist +
         "\"\nlimit = 1000\n[cluster]\nworkers = 2\n[space]\n" + space;
}

std::vector<UnitRecord> records_of(const std::vector<UnitLogEntry>& log) { return e2e::committed_records(log); }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// TPE and TPE+ASHA train real configs proposed as workers free; then a warm
// start from the TPE run begins with the model (tpe) or the earlier best
// configs (random), and bad warm starts are refused before anything is made.
BOOST_AUTO_TEST_CASE(tpe_tpe_asha_and_warm_start_real_runs) {
  TempDir tmp;
  const std::vector<std::pair<std::string, std::string>> runs{
      {"tpe", "search = \"tpe\"\nsamples = 6\nstartup = 3\nepochs = 1\n"},
      {"tpe-asha", "search = \"tpe\"\nsamples = 8\nstartup = 3\npruner = \"asha\"\nmax_epochs = 4\neta = 2\n"}};
  for (const auto& [name, experiment] : runs) {
    BOOST_TEST_CONTEXT(name) {
      auto out = run_cerebro("run " + tmp.write(name + ".toml", spec_for(experiment)) + " --out " + tmp.file(name));
      BOOST_TEST_INFO(out.text);
      BOOST_REQUIRE_EQUAL(out.exit_code, 0);
      const size_t samples = name == "tpe" ? 6 : 8;
      BOOST_TEST(count(out.text, "proposed by tpe") == samples);
      BOOST_TEST(out.text.find("proposed by tpe (TPE over") != std::string::npos, "the model proposed some");
      auto summary = read_json(tmp.file(name) + "/summary.json");
      BOOST_TEST(summary["configs"].size() == samples);
      ExpectedRun expected{2, {}};
      int stopped = 0;
      for (const auto& c : summary["configs"]) {
        auto status = c["status"].get<std::string>();
        BOOST_TEST((status == "completed" || status == "stopped"), status);
        stopped += status == "stopped";
        expected.epochs_completed[c["id"].get<int>()] = static_cast<int32_t>(c["epochs"].size());
      }
      if (name == "tpe-asha") BOOST_TEST(stopped > 0, "the pruner stopped some configs");
      auto store = StateStore::open(tmp.file(name) + "/state", false);
      BOOST_REQUIRE(store.ok());
      auto invariants = check_mop_invariants(records_of((*store)->unit_log()), expected);
      BOOST_TEST(invariants.ok(), invariants.message());
      (*store).reset();  // the replay opens it
      // --replay builds the procedure again and makes it hear the epoch ends
      // in this run's order: the same proposals, decisions and metrics.
      auto replay = run_cerebro("run --replay " + tmp.file(name) + " --out " + tmp.file(name + "-replay"));
      BOOST_TEST_INFO(replay.text);
      BOOST_REQUIRE_EQUAL(replay.exit_code, 0);
      BOOST_TEST(replay.text.find(fmt::format("replay reproduced the metrics of all {} configs exactly", samples)) !=
                 std::string::npos);
      BOOST_TEST(count(replay.text, "proposed by tpe") == samples);
    }
  }

  // Warm start from the tpe run: its 6 finished configs are observations, so
  // (startup 3) the model proposes from the first config on.
  auto warm = run_cerebro(
      "run " +
      tmp.write("warm.toml", spec_for("search = \"tpe\"\nsamples = 3\nstartup = 3\nepochs = 1\nwarm_start = [\"" +
                                      tmp.file("tpe") + "\"]\n")) +
      " --out " + tmp.file("warm"));
  BOOST_TEST_INFO(warm.text);
  BOOST_REQUIRE_EQUAL(warm.exit_code, 0);
  BOOST_TEST(warm.text.find("tpe starts with 6 finished configs of 1 earlier run") != std::string::npos);
  BOOST_TEST(count(warm.text, "proposed by tpe (TPE over 6 finished configs") >= 1u);
  BOOST_TEST(warm.text.find("random startup") == std::string::npos);

  // random, from the earlier best configs' checkpoints: at most half (2 of 4) are seeded.
  auto seeded =
      run_cerebro("run " +
                  tmp.write("seeded.toml", spec_for("search = \"random\"\nsamples = 4\nepochs = 1\nwarm_start = [\"" +
                                                    tmp.file("tpe") + "\"]\nfrom_checkpoint = true\n")) +
                  " --out " + tmp.file("seeded"));
  BOOST_TEST_INFO(seeded.text);
  BOOST_REQUIRE_EQUAL(seeded.exit_code, 0);
  BOOST_TEST(count(seeded.text, "(warm start, val_accuracy") == 2u);
  auto earlier = read_json(tmp.file("tpe") + "/summary.json");
  auto later = read_json(tmp.file("seeded") + "/summary.json");
  // Config 0 is the earlier best, trained one more epoch from its checkpoint:
  // it starts where the earlier run's best ended, so it is at least close.
  double earlier_best = 0;
  for (const auto& c : earlier["configs"])
    if (!c["epochs"].empty()) earlier_best = std::max(earlier_best, c["epochs"].back()["val_accuracy"].get<double>());
  double seeded_config0 = 0;
  for (const auto& c : later["configs"])
    if (c["id"] == 0) seeded_config0 = c["epochs"].back()["val_accuracy"].get<double>();
  BOOST_TEST(seeded_config0 > earlier_best - 0.1, seeded_config0 << " vs the earlier best " << earlier_best);

  // Bad warm starts: a missing directory, a run over another space.
  auto missing = run_cerebro("run " +
                             tmp.write("missing.toml", spec_for("search = \"tpe\"\nsamples = 3\nwarm_start = [\"" +
                                                                tmp.file("nowhere") + "\"]\n")) +
                             " --out " + tmp.file("missing"));
  BOOST_TEST(missing.exit_code != 0);
  BOOST_TEST(missing.text.find("[experiment] warm_start: " + tmp.file("nowhere") + ": no such run directory") !=
                 std::string::npos,
             missing.text);
  BOOST_TEST(!fs::exists(tmp.file("missing")));
  const std::string other_space = "model = [\"mlp\"]\nhidden = [[16], [32]]\nlr = [0.01, 0.001]\n";
  auto other = run_cerebro(
      "run " +
      tmp.write("other.toml",
                spec_for("search = \"tpe\"\nsamples = 3\nwarm_start = [\"" + tmp.file("tpe") + "\"]\n", other_space)) +
      " --out " + tmp.file("other"));
  BOOST_TEST(other.exit_code != 0);
  BOOST_TEST(other.text.find("it searched another [space] (keys that differ: dropout, lr)") != std::string::npos,
             other.text);
  BOOST_TEST(!fs::exists(tmp.file("other")));
}

// Killed mid-search (the process crashes once its 5th unit is durable) and
// resumed, a tpe run proposes exactly the configs, ids and params, that an
// uninterrupted run with the same seed proposes. One worker and one partition:
// the order the configs end in (what each proposal is conditioned on) then
// does not depend on timing, in either run.
BOOST_AUTO_TEST_CASE(a_tpe_run_killed_mid_search_resumes_with_the_same_proposals) {
  TempDir tmp;
  const auto spec = tmp.write("resume.toml",
                              "[experiment]\nsearch = \"tpe\"\nsamples = 5\nstartup = 2\nepochs = 2\n"
                              "seed = 5\n[data]\nsource = \"idx\"\npath = \"" +
                                  std::string(fashion_mnist) +
                                  "\"\nlimit = 600\npartitions = 1\n[cluster]\nworkers = 1\n[space]\n" + kSpace);
  auto whole = run_cerebro("run " + spec + " --out " + tmp.file("whole"));
  BOOST_TEST_INFO(whole.text);
  BOOST_REQUIRE_EQUAL(whole.exit_code, 0);
  auto first = run_command(faults::with_faults("crash=after_commit:5") + cerebro_binary() + " run " + spec + " --out " +
                           tmp.file("cut"));
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  BOOST_REQUIRE(first.text.find("crashing at after_commit") != std::string::npos);
  {
    auto cut = faults::open_store(tmp.file("cut"));
    BOOST_REQUIRE_EQUAL(cut->unit_log().size(), 5u);
    BOOST_REQUIRE(cut->configs().size() < 5u);  // the rest are proposed after the resume
  }
  auto resumed = run_cerebro("run --resume " + tmp.file("cut"));
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  BOOST_TEST(count(resumed.text, "proposed by tpe (TPE over") >= 1u, "the model proposed after the resume");
  auto a = faults::open_store(tmp.file("whole"))->configs();
  auto b = faults::open_store(tmp.file("cut"))->configs();
  BOOST_REQUIRE_EQUAL(a.size(), 5u);
  BOOST_REQUIRE_EQUAL(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST_CONTEXT("config " << a[i].id) {
      BOOST_TEST(b[i].id == a[i].id);
      BOOST_TEST(b[i].params == a[i].params, b[i].params.dump() << " vs " << a[i].params.dump());
      BOOST_TEST(to_string(b[i].status) == to_string(a[i].status));
    }
  }
  BOOST_TEST(read_json(tmp.file("cut") + "/summary.json")["resumes"] == 1);
}

// On a coordinator, warm_start names an earlier experiment by its id and the
// new experiment reads that experiment's run directory; an unknown id is
// refused when the spec is submitted.
BOOST_AUTO_TEST_CASE(warm_start_from_an_experiment_id_on_a_coordinator) {
  TempDir tmp;
  Cluster cluster(tmp);
  const int port = free_port();
  cluster.start_with_agents(port, {"node1"});
  const std::string on_cluster = cluster.client_flags(port);
  const auto experiments = tmp.file("state") + "/experiments";

  auto first = run_cerebro(
      "run " + tmp.write("first.toml", spec_for("search = \"tpe\"\nsamples = 3\nstartup = 2\nepochs = 1\n")) +
      on_cluster + " --out " + tmp.file("first"));
  BOOST_TEST_INFO(first.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(first.exit_code, 0);
  std::string id;
  for (const auto& e : fs::directory_iterator(experiments)) id = e.path().filename().string();
  BOOST_REQUIRE(!id.empty());

  auto warm = run_cerebro(
      "run " +
      tmp.write("warm.toml",
                spec_for("search = \"tpe\"\nsamples = 2\nstartup = 2\nepochs = 1\nwarm_start = [\"" + id + "\"]\n")) +
      on_cluster + " --out " + tmp.file("warm"));
  BOOST_TEST_INFO(warm.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(warm.exit_code, 0);
  std::string second;
  for (const auto& e : fs::directory_iterator(experiments))
    if (e.path().filename().string() != id) second = e.path().string();
  BOOST_REQUIRE(!second.empty());
  {
    auto store = faults::open_store(second);
    auto kept = nlohmann::json::parse(store->get_meta("warm_start").value_or("[]"));
    BOOST_REQUIRE_EQUAL(kept.size(), 3u);  // the first experiment's three finished configs
    for (const auto& w : kept) BOOST_TEST(fs::path(w["run_dir"].get<std::string>()).filename().string() == id);
  }

  auto unknown = run_cerebro(
      "run " +
      tmp.write("unknown.toml", spec_for("search = \"tpe\"\nsamples = 2\nwarm_start = [\"no-such-experiment\"]\n")) +
      on_cluster + " --out " + tmp.file("unknown"));
  BOOST_TEST(unknown.exit_code != 0);
  BOOST_TEST(unknown.text.find("[experiment] warm_start: \"no-such-experiment\" is neither an experiment of this "
                               "coordinator") != std::string::npos,
             unknown.text);
}

// Several objectives: MOTPE proposes, the summary lists the objectives, each
// config's values and the Pareto front, and the run prints the front.
BOOST_AUTO_TEST_CASE(several_objectives_give_a_pareto_front) {
  TempDir tmp;
  auto out =
      run_cerebro("run " +
                  tmp.write("mo.toml", spec_for("search = \"tpe\"\nsamples = 5\nstartup = 2\nepochs = 1\n"
                                                "metric = [\"val_accuracy\", \"parameters\", \"inference_ms\"]\n")) +
                  " --out " + tmp.file("mo"));
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("Pareto front (val_accuracy max, parameters min, inference_ms min)") != std::string::npos);
  auto summary = read_json(tmp.file("mo") + "/summary.json");
  BOOST_REQUIRE_EQUAL(summary["objectives"].size(), 3u);
  BOOST_TEST(summary["objectives"][1]["direction"] == "minimize");
  const auto& front = summary["pareto_front"];
  BOOST_REQUIRE(!front.empty());
  // No config dominates a member of the front, and every config has its values.
  for (const auto& c : summary["configs"]) {
    BOOST_REQUIRE(c["objectives"].is_object());
    BOOST_TEST(c["objectives"]["parameters"].get<double>() > 0);
    for (const auto& f : front) {
      const auto& a = c["objectives"];
      const auto& b = f["values"];
      const bool no_worse = a["val_accuracy"] >= b["val_accuracy"] && a["parameters"] <= b["parameters"] &&
                            a["inference_ms"] <= b["inference_ms"];
      const bool better = a["val_accuracy"] > b["val_accuracy"] || a["parameters"] < b["parameters"] ||
                          a["inference_ms"] < b["inference_ms"];
      BOOST_TEST(!(no_worse && better), "config " << c["id"] << " dominates front member " << f["id"]);
    }
  }
  // The best (test-scored) config is the best by the run's metric, the first task metric.
  double best_val = 0;
  for (const auto& c : summary["configs"]) best_val = std::max(best_val, c["objectives"]["val_accuracy"].get<double>());
  BOOST_TEST(summary["best"]["val_accuracy"].get<double>() == best_val);
}

// Specs the parser refuses before any run: clear errors naming the key.
BOOST_AUTO_TEST_CASE(bad_tpe_specs_are_refused_with_the_key_named) {
  TempDir tmp;
  const std::vector<std::pair<std::string, std::string>> bad{
      {spec_for("search = \"tpe\"\nsamples = 4\n", "model = \"mlp\"\nlr = 0.01\n"), "nothing to search"},
      {spec_for("search = \"grid\"\npruner = \"asha\"\n", "model = \"mlp\"\nlr = [0.01, 0.1]\n"),
       "pruner applies only to search = \"tpe\""},
      {spec_for("search = \"tpe\"\nsamples = 4\nmetric = \"no_such_objective\"\n"), "[experiment] metric must be"},
      // A grid in disguise: lists only, fewer combinations than samples.
      {spec_for("search = \"tpe\"\nsamples = 8\n", "model = [\"mlp\"]\nlr = [0.01, 0.1]\nhidden = [[16], [32]]\n"),
       "samples = 8 but the [space] (lists only) has 4 combinations: use search = \"grid\""},
      {spec_for("search = \"random\"\nsamples = 4\npruner = \"hyperband\"\n"),
       "pruner applies only to search = \"tpe\""},
      {spec_for("search = \"tpe\"\nsamples = 4\nmetric = [\"val_accuracy\", \"flops\"]\n"),
       "[experiment] metric has an unknown objective \"flops\""},
      // A directory that is not a run (no state/ in it).
      {spec_for("search = \"tpe\"\nsamples = 4\nwarm_start = [\"" + tmp.path().string() + "\"]\n"),
       "[experiment] warm_start: " + tmp.path().string() + ": not a run directory (it has no state/)"}};
  int i = 0;
  for (const auto& [spec, message] : bad) {
    auto out = run_cerebro("run " + tmp.write("bad" + std::to_string(i) + ".toml", spec) + " --out " +
                           tmp.file("bad-run" + std::to_string(i)));
    BOOST_TEST(out.exit_code != 0);
    BOOST_TEST(out.text.find(message) != std::string::npos, out.text);
    BOOST_TEST(!fs::exists(tmp.file("bad-run" + std::to_string(i))));
    ++i;
  }
}
