#define BOOST_TEST_MODULE end_to_end
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "runtime/store/state_store.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "test/support/e2e_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

std::vector<UnitRecord> records_of(const std::vector<UnitLogEntry>& log) { return e2e::committed_records(log); }

}  // namespace

// A small grid trained end to end: the unit log keeps MOP's invariants, the
// models learn, the run directory is complete, and a replay reproduces it.
BOOST_AUTO_TEST_CASE(small_run_keeps_invariants_learns_and_replays_exactly) {
  TempDir tmp;
  auto spec = tmp.write("small.toml",
                        small_spec("model = [\"mlp\", \"cnn\"]\nlr = [1e-3, 3e-3]\nbatch_size = [64]\n", 2, 3000, 2));
  auto run_dir = tmp.file("run");
  auto out = run_cerebro("run " + spec + " --out " + run_dir);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);

  auto summary = read_json(run_dir + "/summary.json");
  BOOST_TEST(summary["experiment"] == "small");
  BOOST_TEST(summary["workers"] == 2);
  BOOST_TEST(summary["partitions"] == 2);
  BOOST_TEST(summary["epochs"] == 2);
  BOOST_TEST(summary["wall_s"].get<double>() > 0);
  BOOST_TEST(summary["unit_compute_s"].get<double>() > 0);
  BOOST_TEST(summary["hop_overhead_fraction"].get<double>() >= 0);
  BOOST_TEST(summary["hop_overhead_fraction"].get<double>() < 1);
  // The old span-based figure includes the commits: never below the new one.
  BOOST_TEST(summary["span_overhead_fraction"].get<double>() >= summary["hop_overhead_fraction"].get<double>());
  BOOST_TEST(summary["unit_occupied_s"].get<double>() <= summary["unit_span_s"].get<double>());
  BOOST_REQUIRE_EQUAL(summary["configs"].size(), 4u);
  for (const auto& c : summary["configs"]) {
    BOOST_TEST(c["status"] == "completed");
    BOOST_REQUIRE_EQUAL(c["epochs"].size(), 2u);
    for (const char* key : {"train_loss", "val_loss", "val_accuracy", "seconds"})
      BOOST_TEST(c["epochs"][0].contains(key));
  }
  // Chance is 0.1 on ten classes.
  BOOST_TEST(summary["best"]["val_accuracy"].get<double>() > 0.6);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.6);
  BOOST_TEST(fs::exists(run_dir + "/metrics.csv"));
  BOOST_TEST(fs::exists(run_dir + "/best_model.pt"));
  BOOST_TEST(fs::exists(run_dir + "/spec.toml"));
  BOOST_TEST(fs::exists(run_dir + "/data/manifest.json"));

  {
    auto store = StateStore::open(run_dir + "/state", false);
    BOOST_REQUIRE(store.ok());
    auto log = (*store)->unit_log();
    BOOST_TEST(log.size() == 4u * 2u * 2u);  // configs x partitions x epochs
    ExpectedRun expected{2, {{0, 2}, {1, 2}, {2, 2}, {3, 2}}};
    auto invariants = check_mop_invariants(records_of(log), expected);
    BOOST_TEST(invariants.ok(), invariants.message());
    // Both workers took part, and models hopped between them.
    std::set<WorkerId> workers;
    for (const auto& e : log) workers.insert(e.worker);
    BOOST_TEST(workers.size() == 2u);
    for (const auto& e : log) BOOST_TEST(e.state_checksum.rfind("crc32:", 0) == 0);
    // A worker is free once its result arrived, so some unit was
    // dispatched to a worker before its previous unit's commit (the check
    // above saw every unit commit exactly once and no worker run two at once).
    std::map<WorkerId, std::vector<const UnitLogEntry*>> by_worker;
    for (const auto& e : log) by_worker[e.worker].push_back(&e);
    int overlapping = 0;
    for (auto& [w, units] : by_worker) {
      std::sort(units.begin(), units.end(),
                [](const UnitLogEntry* a, const UnitLogEntry* b) { return a->start_s < b->start_s; });
      for (size_t i = 1; i < units.size(); ++i) {
        BOOST_TEST(units[i - 1]->result_s >= units[i - 1]->start_s);
        BOOST_TEST(units[i - 1]->result_s <= units[i]->start_s);
        if (units[i]->start_s < units[i - 1]->end_s) ++overlapping;
      }
    }
    BOOST_TEST(overlapping > 0);
  }

  auto shown = run_cerebro("show " + run_dir);
  BOOST_TEST(shown.exit_code == 0);
  BOOST_TEST(shown.text.find("val_accuracy") != std::string::npos);

  auto replayed = run_cerebro("run --replay " + run_dir + " --out " + tmp.file("replay"));
  BOOST_TEST_INFO(replayed.text);
  BOOST_REQUIRE_EQUAL(replayed.exit_code, 0);
  BOOST_TEST(replayed.text.find("reproduced the metrics of all 4 configs exactly") != std::string::npos);
  auto again = read_json(tmp.file("replay") + "/summary.json");
  for (size_t c = 0; c < summary["configs"].size(); ++c)
    for (size_t e = 0; e < 2; ++e)
      for (const char* key : {"train_loss", "val_loss", "val_accuracy"})
        BOOST_TEST(again["configs"][c]["epochs"][e][key].get<double>() ==
                   summary["configs"][c]["epochs"][e][key].get<double>());
}

// A config that cannot fit the data fails its pilot check and one that
// diverges is marked so; the others complete.
BOOST_AUTO_TEST_CASE(misfit_and_diverging_configs_do_not_stop_the_others) {
  TempDir tmp;
  auto spec_text = "[experiment]\nepochs = 2\n[data]\nsource = \"csv\"\ntrain = \"" + std::string(CEREBRO_SOURCE_DIR) +
                   "/examples/data/iris_like.csv\"\nlabel_column = \"species\"\n[cluster]\nworkers = 2\n"
                   "[space]\nmodel = [\"mlp\", \"cnn\"]\nlr = [1e-2]\n";
  auto csv_spec = tmp.write("csv.toml", spec_text);
  auto out = run_cerebro("run " + csv_spec + " --out " + tmp.file("csv-run"));
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto summary = read_json(tmp.file("csv-run") + "/summary.json");
  std::map<std::string, std::string> status;
  for (const auto& c : summary["configs"]) status[c["params"]["model"]] = c["status"];
  BOOST_TEST(status["mlp"] == "completed");
  BOOST_TEST(status["cnn"] == "failed");
  BOOST_TEST(out.text.find("needs image samples") != std::string::npos);

  auto diverging =
      tmp.write("div.toml",
                small_spec("model = [\"mlp\"]\noptimizer = [\"sgd\"]\nlr = [1e-3, 1e6]\nbatch_size = [64]\n", 2, 1000));
  out = run_cerebro("run " + diverging + " --out " + tmp.file("div-run"));
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  summary = read_json(tmp.file("div-run") + "/summary.json");
  BOOST_TEST(summary["configs"][0]["status"] == "completed");
  BOOST_TEST(summary["configs"][1]["status"] == "diverged");
  BOOST_TEST(summary["best"]["id"] == 0);
}

// Each AutoML procedure completes a real small run; its decisions are in the
// state store, the MOP invariants hold for every config's epochs, and a
// replay of the ASHA run reproduces it exactly.
BOOST_AUTO_TEST_CASE(asha_hyperband_and_pbt_complete_real_runs) {
  TempDir tmp;
  const std::string space =
      "model = [\"mlp\"]\nhidden = [[32]]\nlr = { dist = \"loguniform\", low = 1e-4, high = 3e-2 }\n";
  auto spec_for = [&](const std::string& experiment) {
    return "[experiment]\n" + experiment + "seed = 3\n[data]\nsource = \"idx\"\npath = \"" + fashion_mnist +
           "\"\nlimit = 1200\n[cluster]\nworkers = 2\n[space]\n" + space;
  };
  const std::vector<std::pair<std::string, std::string>> procedures{
      {"asha", "search = \"asha\"\nsamples = 8\nmax_epochs = 4\neta = 2\n"},
      {"hyperband", "search = \"hyperband\"\nmax_epochs = 4\neta = 2\n"},
      {"pbt", "search = \"pbt\"\npopulation = 4\nepochs = 3\nready = 1\n"}};
  for (const auto& [name, experiment] : procedures) {
    BOOST_TEST_CONTEXT(name) {
      auto spec = tmp.write(name + ".toml", spec_for(experiment));
      auto out = run_cerebro("run " + spec + " --out " + tmp.file(name));
      BOOST_TEST_INFO(out.text);
      BOOST_REQUIRE_EQUAL(out.exit_code, 0);
      auto summary = read_json(tmp.file(name) + "/summary.json");
      ExpectedRun expected{2, {}};
      int stopped = 0;
      for (const auto& c : summary["configs"]) {
        auto status = c["status"].get<std::string>();
        BOOST_TEST((status == "completed" || status == "stopped"), status);
        stopped += status == "stopped";
        expected.epochs_completed[c["id"].get<int>()] = static_cast<int32_t>(c["epochs"].size());
      }
      if (name != "pbt") BOOST_TEST(stopped > 0, "early stopping stopped some configs");
      auto store = StateStore::open(tmp.file(name) + "/state", false);
      BOOST_REQUIRE(store.ok());
      BOOST_TEST(!(*store)->decisions().empty());
      auto invariants = check_mop_invariants(records_of((*store)->unit_log()), expected);
      BOOST_TEST(invariants.ok(), invariants.message());
      if (name == "pbt")
        BOOST_TEST(out.text.find("took config") != std::string::npos, "a bottom member copied a top member");
    }
  }
  auto replayed = run_cerebro("run --replay " + tmp.file("asha") + " --out " + tmp.file("asha-replay"));
  BOOST_TEST_INFO(replayed.text);
  BOOST_TEST(replayed.exit_code == 0);
  BOOST_TEST(replayed.text.find("reproduced the metrics") != std::string::npos);
}

// One heavy config (a cnn, listed last so without priors it would be measured
// last) and 32 light mlps on two workers. The cost priors make the policy
// start the cnn's chain first, and its units never run alone: no stretch at
// the end where only the heavy chain runs while the other worker idles.
// Asserted on the unit log's order and overlaps, which the schedule decides;
// the cnn's chain is at most about two thirds of the run's work per worker
// (a cnn unit costs 10-15 mlp units: 15 when the machine is quiet and the
// mlps' fixed per-unit cost weighs least), so timing noise does not decide
// them. With 14 mlps it was 90% on a quiet machine, and the chain ended the
// run alone: no order could have avoided it.
BOOST_AUTO_TEST_CASE(the_heavy_config_starts_first_and_leaves_no_idle_tail) {
  TempDir tmp;
  // A cnn unit costs 10-15 mlp units here; with 32 mlps the cnn's chain is
  // at most about two thirds of the run's work per worker.
  constexpr int kLight = 32;
  std::string models;
  for (int i = 0; i < kLight; ++i) models += "\"mlp\", ";
  auto spec = tmp.write("tail.toml", small_spec("model = [" + models + "\"cnn\"]\nlr = [1e-3]\n", 2, 4000, 2));
  auto run_dir = tmp.file("run");
  auto out = run_cerebro("run " + spec + " --out " + run_dir);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto summary = read_json(run_dir + "/summary.json");
  ConfigId heavy = -1;
  for (const auto& c : summary["configs"])
    if (c["params"]["model"] == "cnn") heavy = c["id"].get<ConfigId>();
  BOOST_REQUIRE(heavy > 0);  // not the first config: the prior, not the id order, puts it first
  BOOST_TEST(summary["makespan_over_compute"].get<double>() > 0);
  BOOST_TEST(summary["tail_idle_worker_s"].get<double>() >= 0);

  std::vector<UnitLogEntry> log;
  {
    auto store = StateStore::open(run_dir + "/state", false);
    BOOST_REQUIRE(store.ok());
    log = (*store)->unit_log();
    BOOST_TEST((*store)->get_meta("cost_priors").has_value());
  }
  BOOST_REQUIRE_EQUAL(log.size(), (kLight + 1u) * 2u * 2u);
  // The heavy config's first unit is the first dispatched.
  const UnitLogEntry* first = &log.front();
  for (const auto& e : log)
    if (e.start_s < first->start_s || (e.start_s == first->start_s && e.config == heavy)) first = &e;
  BOOST_TEST(first->config == heavy, "the first unit dispatched is config " << first->config << "'s");
  // Every heavy unit overlaps some other unit: the heavy chain never runs alone.
  for (const auto& h : log) {
    if (h.config != heavy) continue;
    bool overlapped = false;
    for (const auto& e : log)
      if (&e != &h && e.start_s < h.end_s && h.start_s < e.end_s) overlapped = true;
    BOOST_TEST(overlapped, "config " << heavy << "'s unit on partition " << h.partition << " in epoch " << h.epoch
                                     << " ran alone from " << h.start_s << " s to " << h.end_s << " s");
  }

  auto shown = run_cerebro("show --units " + run_dir);
  BOOST_TEST_INFO(shown.text);
  BOOST_TEST(shown.exit_code == 0);
  BOOST_TEST(shown.text.find("idle worker-seconds") != std::string::npos);
  BOOST_TEST(shown.text.find("worker   0") != std::string::npos);

  // The simulator replays the same workload and compares makespans.
  auto simulated = run_cerebro("simulate --from-run " + run_dir + " --json");
  BOOST_TEST_INFO(simulated.text);
  BOOST_REQUIRE_EQUAL(simulated.exit_code, 0);
  auto compared = nlohmann::json::parse(simulated.text);
  BOOST_TEST(compared["policy"] == "critical_path");
  BOOST_TEST(compared["configs"] == kLight + 1);
  BOOST_TEST(compared["priors"] == kLight + 1);
  BOOST_TEST(compared["real_makespan"].get<double>() > 0);
  BOOST_TEST(compared["simulated_makespan"].get<double>() > 0);
}

// The scheduler starts a config's next unit from the state it
// kept at the last commit instead of reading the store. A replay with that
// cache turned off (test fault injection turns it off; the rule here changes
// nothing else) reads every state from the store and must reproduce the
// metrics exactly: the kept states were the latest durable ones.
BOOST_AUTO_TEST_CASE(states_kept_by_the_scheduler_are_the_stored_ones) {
  TempDir tmp;
  // MOP only: under auto a config's last units may train as a gang when the
  // timings say so, and a replay runs MOP (it would differ for that reason).
  std::string text = small_spec("model = [\"mlp\"]\nlr = [1e-3, 3e-3, 1e-2]\nbatch_size = [64]\n", 3, 2000, 2);
  text.replace(text.find("[cluster]\n"), 10, "[cluster]\nparallelism = \"mop\"\n");
  auto spec = tmp.write("kept.toml", text);
  auto run_dir = tmp.file("run");
  auto out = run_cerebro("run " + spec + " --out " + run_dir);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto replayed = run_command("CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test CEREBRO_FAULTS='slow_worker=999:1' " +
                              cerebro_binary() + " run --replay " + run_dir + " --out " + tmp.file("replay"));
  BOOST_TEST_INFO(replayed.text);
  BOOST_REQUIRE_EQUAL(replayed.exit_code, 0);
  BOOST_TEST(replayed.text.find("reproduced the metrics of all 3 configs exactly") != std::string::npos);
  auto summary = read_json(run_dir + "/summary.json"), again = read_json(tmp.file("replay") + "/summary.json");
  BOOST_REQUIRE_EQUAL(summary["configs"].size(), 3u);
  for (size_t c = 0; c < 3; ++c)
    for (size_t e = 0; e < 3; ++e)
      BOOST_TEST(again["configs"][c]["epochs"][e]["val_loss"].get<double>() ==
                 summary["configs"][c]["epochs"][e]["val_loss"].get<double>());
}
