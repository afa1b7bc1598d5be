#define BOOST_TEST_MODULE runtime_run
// A run's recovery and finishing (runtime/run) on a real state store, without
// actors or LibTorch: the models' part is a test double of TrainedModels.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "runtime/run/run_finisher.hpp"
#include "runtime/run/run_recovery.hpp"
#include "runtime/run/warm_start.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/spec/steering.hpp"
#include "test/support/contract_check.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr int kPartitions = 2;
constexpr int kEpochs = 2;

const char* kSpec = R"(
[experiment]
name = "recovery"
epochs = 2
seed = 5

[data]
source = "csv"
train = "t.csv"
label_column = "y"
partitions = 2

[space]
model = "mlp"
lr = [0.1, 0.2, 0.3]
)";

UnitLogEntry entry(ConfigId c, PartitionId p, int32_t epoch, double val_accuracy = 0) {
  UnitLogEntry e;
  e.config = c;
  e.partition = p;
  e.epoch = epoch;
  e.status = UnitStatus::ok;
  e.train_loss = 0.5;
  e.examples = 10;
  e.start_s = 1;
  e.end_s = 2;
  // The config's last partition of the epoch validates.
  e.has_validation = p == kPartitions - 1;
  e.val_accuracy = val_accuracy;
  e.val_loss = 1 - val_accuracy;
  return e;
}

// A run directory with a store as a run's setup leaves it: the spec, three
// configs (0, 1, 2) with their initial states.
struct RunDir {
  TempDir dir;
  std::unique_ptr<StateStore> store;
  ExperimentSpec spec;
  std::vector<std::string> said;
  Say say = [this](const std::string& line) { said.push_back(line); };

  RunDir() {
    store = StateStore::open((dir.path() / "state").string(), true).value();
    store->put_meta("spec", kSpec);
    store->put_meta("spec_dir", "/specs");
    for (ConfigId c = 0; c < 3; ++c) {
      store->put_config(ConfigRecord{c, {{"model", "mlp"}, {"lr", 0.1 * (c + 1)}}, ConfigStatus::running, ""});
      store->put_initial_state(c, "initial-" + std::to_string(c));
    }
    spec = spec_of_run(*store, run_dir()).value();
  }
  std::string run_dir() const { return dir.path().string(); }
  bool said_with(const std::string& part) const {
    for (const auto& line : said)
      if (line.find(part) != std::string::npos) return true;
    return false;
  }
};

class FakeModels : public TrainedModels {
 public:
  Result<Score> test(const nlohmann::json& params, const std::string& state) override {
    tested_state = state;
    tested_params = params;
    if (!test_error.empty()) return Status::failed_precondition(test_error);
    return Score{0.75, 0.6};
  }
  Status export_model(const nlohmann::json&, const std::string& state, const std::string& path) override {
    if (!export_error.empty()) return Status::io_error(export_error);
    std::ofstream(path) << "model from " << state;
    return Status::ok_status();
  }
  std::string test_error, export_error, tested_state;
  nlohmann::json tested_params;
};

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_spec_of_a_run_comes_from_its_store) {
  RunDir run;
  BOOST_TEST(run.spec.name == "recovery");
  BOOST_TEST(run.spec.epochs == kEpochs);
  BOOST_TEST(resumable_spec(*run.store, run.run_dir()).ok());
}

// A relative path that was found under a coordinator's data root when the run was submitted is found
// there again on resume: the roots are kept with the run (docs/CLUSTER.md "Data roots").
BOOST_AUTO_TEST_CASE(a_resumed_spec_looks_under_the_data_roots_it_was_submitted_with) {
  RunDir r;
  TempDir root;
  root.write("t.csv", "x,label\n1,0\n");
  r.store->put_meta("spec_search_dirs", nlohmann::json::array({root.path().string()}).dump());
  auto spec = spec_of_run(*r.store, r.run_dir());
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  BOOST_TEST(spec->data.train == (root.path() / "t.csv").string());
  r.store->put_meta("spec_search_dirs", "not json");
  BOOST_TEST(spec_of_run(*r.store, r.run_dir()).status().is_corruption());
}

BOOST_AUTO_TEST_CASE(a_finished_run_cannot_resume) {
  RunDir run;
  run.store->put_meta("finished", "true");
  auto spec = resumable_spec(*run.store, run.run_dir());
  BOOST_REQUIRE(!spec.ok());
  BOOST_TEST(spec.error().find("the run has finished") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(recovery_keeps_committed_units_and_counts_each_resume) {
  RunDir run;
  run.store->commit_unit(entry(0, 0, 0), "c0-p0");
  run.store->commit_unit(entry(0, 1, 0, 0.5), "c0-p1");
  run.store->commit_unit(entry(1, 1, 0), "c1-p1");
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  BOOST_TEST(recovered->units_done == 3);
  BOOST_TEST(recovered->configs.size() == 3u);
  BOOST_TEST(recovered->params_json.size() == 3u);
  BOOST_TEST(recovered->control->units_total() == 3 * kPartitions * kEpochs);
  BOOST_TEST(recovered->control->units_done() == 3);
  BOOST_TEST(run.store->get_meta("resumes").value_or("") == "1");
  BOOST_TEST(run.said.empty());  // nothing to warn about
  // No committed unit is dispatched again.
  for (const auto& d : recovered->control->dispatch()) BOOST_TEST(!(d.unit.config == 0 && d.unit.epoch == 0));

  auto again = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(run.store->get_meta("resumes").value_or("") == "2");
}

BOOST_AUTO_TEST_CASE(a_failed_config_stays_out_and_a_stopped_one_stays_stopped) {
  RunDir run;
  run.store->put_config(ConfigRecord{1, {{"model", "mlp"}, {"lr", 0.2}}, ConfigStatus::failed, "pilot check failed"});
  run.store->put_config(ConfigRecord{2, {{"model", "mlp"}, {"lr", 0.3}}, ConfigStatus::stopped, ""});
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  BOOST_TEST(recovered->params_json.count(0) == 1u);
  BOOST_TEST(recovered->params_json.count(1) == 0u);
  BOOST_TEST(recovered->params_json.count(2) == 1u);
  const auto& outcomes = recovered->control->outcomes();
  BOOST_TEST(outcomes.at(1).status == ConfigStatus::failed);
  BOOST_TEST(outcomes.at(1).error == "pilot check failed");
  BOOST_TEST(outcomes.at(2).status == ConfigStatus::stopped);
  for (const auto& d : recovered->control->dispatch()) BOOST_TEST(d.unit.config == 0);
}

BOOST_AUTO_TEST_CASE(a_damaged_latest_state_falls_back_and_its_units_run_again) {
  RunDir run;
  run.store->commit_unit(entry(0, 0, 0), "c0-p0");
  run.store->commit_unit(entry(0, 1, 0, 0.5), "c0-p1", /*damage_for_test=*/true);
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  BOOST_TEST(run.said_with("warning: config 0"));
  BOOST_TEST(run.said_with("falling back to its state after seq 1"));
  BOOST_TEST(recovered->units_done == 1);  // the damaged unit runs again
  BOOST_TEST(run.store->latest_state(0).value() == "c0-p0");
}

BOOST_AUTO_TEST_CASE(recovery_rederives_search_decisions_and_keeps_a_persons_steps) {
  RunDir run;
  auto pause = user_action(SteeringCommand::pause);
  run.store->put_decision(pause);
  run.store->put_decision(nlohmann::json{{"kind", "not re-derived"}});
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  auto decisions = run.store->decisions();
  BOOST_REQUIRE(decisions.size() == 1u);  // grid search decides nothing before an epoch ends
  BOOST_TEST(decisions[0] == pause);
}

// The spec parser gives only the scheduler table's kinds: a kind make_policy
// has no case for is a bug, and recovery stops at it, before it writes.
BOOST_AUTO_TEST_CASE(an_unknown_scheduler_kind_is_a_contract_violation) {
  RunDir run;
  auto spec = run.spec;
  spec.cluster.scheduler = static_cast<SchedulerKind>(99);  // a kind no policy is made for
  CEREBRO_CHECK_CONTRACT(recover_run(*run.store, spec, "", kPartitions, run.run_dir(), run.say),
                         "make_policy: scheduling policy 99 has no factory");
  BOOST_TEST(!run.store->get_meta("resumes").has_value());
}

namespace {

// Configs 0 and 1 trained both epochs (1 validating better); 2 was stopped.
std::shared_ptr<ExperimentControl> trained(RunDir& run) {
  for (int epoch = 0; epoch < kEpochs; ++epoch)
    for (ConfigId c = 0; c < 2; ++c)
      for (PartitionId p = 0; p < kPartitions; ++p)
        run.store->commit_unit(entry(c, p, epoch, 0.4 + 0.2 * c + 0.1 * epoch),
                               "c" + std::to_string(c) + "-e" + std::to_string(epoch) + "-p" + std::to_string(p));
  run.store->put_config(ConfigRecord{2, {{"model", "mlp"}, {"lr", 0.3}}, ConfigStatus::stopped, ""});
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  return recovered->control;
}

}  // namespace

BOOST_AUTO_TEST_CASE(finishing_writes_the_summary_and_metrics_and_marks_the_run_finished) {
  RunDir run;
  auto control = trained(run);
  FakeModels models;
  FinishedTraining training{3, kPartitions, 12.5, 4.0, ""};
  auto summary = finish_run(*run.store, *control, run.spec, training, models, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(summary.ok(), summary.error());
  BOOST_TEST(run.store->get_meta("finished").value_or("") == "true");
  BOOST_TEST(!resumable_spec(*run.store, run.run_dir()).ok());
  // The best config (1) was scored on its latest state and exported.
  BOOST_TEST(models.tested_state == "c1-e1-p1");
  BOOST_TEST((*summary)["best"]["id"] == 1);
  BOOST_TEST((*summary)["best"]["test_accuracy"] == 0.75);
  BOOST_TEST((*summary)["best"]["model_file"] == "best_model.pt");
  BOOST_TEST(fs::exists(run.dir.path() / "best_model.pt"));
  BOOST_TEST(read_json(run.dir.path() / "summary.json") == *summary);
  BOOST_TEST(fs::file_size(run.dir.path() / "metrics.csv") > 0u);
  // TensorBoard logs: the experiment's hparams file and one run per config
  // (their contents: test_runtime_viz and test_viz_report).
  for (auto sub : {"tensorboard", "tensorboard/config-0", "tensorboard/config-1", "tensorboard/config-2"}) {
    int event_files = 0;
    for (const auto& f : fs::directory_iterator(run.dir.path() / sub))
      event_files += f.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    BOOST_TEST(event_files == 1, sub);
  }
  // Final statuses: the trained configs completed, the stopped one stays stopped.
  std::map<ConfigId, ConfigStatus> status;
  for (const auto& record : run.store->configs()) status[record.id] = record.status;
  BOOST_TEST(status[0] == ConfigStatus::completed);
  BOOST_TEST(status[1] == ConfigStatus::completed);
  BOOST_TEST(status[2] == ConfigStatus::stopped);
  // A resumed run's unit span is the sum over its log (8 units of 1 s).
  BOOST_TEST((*summary)["resumes"] == 1);
}

BOOST_AUTO_TEST_CASE(a_failed_export_is_said_and_the_run_still_finishes) {
  RunDir run;
  auto control = trained(run);
  FakeModels models;
  models.export_error = "disk full";
  auto summary = finish_run(*run.store, *control, run.spec, FinishedTraining{1, kPartitions, 1, 1, ""}, models,
                            run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(summary.ok(), summary.error());
  BOOST_TEST((*summary)["best"]["model_file"].is_null());
  BOOST_TEST(run.said_with("the best model could not be exported: disk full"));
  BOOST_TEST(run.store->get_meta("finished").value_or("") == "true");
}

BOOST_AUTO_TEST_CASE(a_failed_test_score_leaves_the_run_unfinished) {
  RunDir run;
  auto control = trained(run);
  FakeModels models;
  models.test_error = "cannot load the state";
  auto summary = finish_run(*run.store, *control, run.spec, FinishedTraining{1, kPartitions, 1, 1, ""}, models,
                            run.run_dir(), run.say);
  BOOST_REQUIRE(!summary.ok());
  BOOST_TEST(summary.error().find("cannot load the state") != std::string::npos);
  BOOST_TEST(!run.store->get_meta("finished").has_value());
  BOOST_TEST(!fs::exists(run.dir.path() / "summary.json"));
}

namespace {

UnitLogEntry span(WorkerId w, ConfigId c, double start, double end) {
  UnitLogEntry e;
  e.worker = w;
  e.config = c;
  e.start_s = start;
  e.end_s = end;
  e.train_s = end - start;
  return e;
}

}  // namespace

// The idle tail: from the last moment both workers were busy (10 s) to the
// last commit (40 s), worker 1 idles while worker 0 runs a chain alone.
BOOST_AUTO_TEST_CASE(the_schedule_tail_counts_idle_worker_seconds_after_the_last_full_moment) {
  std::vector<UnitLogEntry> log = {span(0, 0, 0, 10), span(1, 1, 0, 5), span(1, 2, 5, 10), span(0, 3, 10, 25),
                                   span(0, 3, 25.5, 40)};
  ScheduleTail tail = schedule_tail(log, 2);
  BOOST_TEST(tail.first_start_s == 0.0);
  BOOST_TEST(tail.last_end_s == 40.0);
  BOOST_TEST(tail.tail_start_s == 10.0);
  // Worker 1 idle 30 s, worker 0 idle in its 0.5 s gap.
  BOOST_TEST(tail.tail_idle_worker_s == 30.5, boost::test_tools::tolerance(1e-9));
  BOOST_REQUIRE_EQUAL(tail.idle_at_end_s.size(), 2u);
  BOOST_TEST(tail.idle_at_end_s[0].second == 0.0);
  BOOST_TEST(tail.idle_at_end_s[1].second == 30.0);
  // The same units with the chain split over both workers end at 25 s: the
  // tail is only the last units' difference.
  std::vector<UnitLogEntry> even = {span(0, 0, 0, 10), span(1, 3, 0, 15), span(0, 1, 10, 15), span(0, 2, 15, 20),
                                    span(1, 3, 15, 25)};
  ScheduleTail short_tail = schedule_tail(even, 2);
  BOOST_TEST(short_tail.tail_start_s == 20.0);
  BOOST_TEST(short_tail.tail_idle_worker_s == 5.0, boost::test_tools::tolerance(1e-9));
  // A worker that never ran a unit leaves every moment short of full.
  BOOST_TEST(schedule_tail(even, 3).tail_start_s == 0.0);
  BOOST_TEST(makespan_over_compute(30.0, 50.0, 2) == 1.2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(makespan_over_compute(30.0, 0.0, 2) == 0.0);
  BOOST_TEST(schedule_tail({}, 2).tail_idle_worker_s == 0.0);
}

BOOST_AUTO_TEST_CASE(the_summary_has_makespan_over_compute_and_the_tail) {
  std::vector<UnitLogEntry> log = {span(0, 0, 0, 10), span(1, 1, 0, 5), span(1, 2, 5, 10), span(0, 3, 10, 25),
                                   span(0, 3, 25.5, 40)};
  RunFacts facts;
  facts.workers = 2;
  facts.wall_s = 41;
  auto summary = build_summary(facts, {}, log, nullptr);
  // 49.5 s of unit compute on 2 workers in 41 s of wall time.
  BOOST_TEST(summary["unit_compute_s"].get<double>() == 49.5, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(summary["makespan_over_compute"].get<double>() == 41 / (49.5 / 2), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(summary["tail_idle_worker_s"].get<double>() == 30.5, boost::test_tools::tolerance(1e-9));
}

// A resumed run schedules with the priors its start measured; unreadable
// ones are said and left out.
BOOST_AUTO_TEST_CASE(recovery_hands_the_stored_cost_priors_to_the_policy) {
  RunDir run;
  run.store->put_meta("cost_priors", R"({"0": 1e-5, "1": 1e-5, "2": 5e-4})");
  auto recovered = recover_run(*run.store, run.spec, "", kPartitions, run.run_dir(), run.say);
  BOOST_REQUIRE_MESSAGE(recovered.ok(), recovered.error());
  recovered->control->add_worker(0, {0, 1});
  auto first = recovered->control->dispatch();
  BOOST_REQUIRE(!first.empty());
  BOOST_TEST(first.front().unit.config == 2);  // the heavy one, though config 0 comes first without priors
  RunDir other;
  other.store->put_meta("cost_priors", R"({"zero": 1})");
  auto without = recover_run(*other.store, other.spec, "", kPartitions, other.run_dir(), other.say);
  BOOST_REQUIRE_MESSAGE(without.ok(), without.error());
  BOOST_TEST(other.said_with("cost priors are unreadable"));
  without->control->add_worker(0, {0, 1});
  auto blind = without->control->dispatch();
  BOOST_REQUIRE(!blind.empty());
  BOOST_TEST(blind.front().unit.config == 0);
}

// On a coordinator, warm_start entries written as bare names that
// are experiment ids become those experiments' run directories; other entries
// stay directories; an unknown name or an unfinished experiment is refused.
BOOST_AUTO_TEST_CASE(warm_start_names_a_coordinators_experiments_by_id) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "specs" / "local-run");
  auto parse = [&](const std::string& entries) {
    const std::string text = "[experiment]\nsearch = \"random\"\nsamples = 2\nepochs = 1\nwarm_start = [" + entries +
                             "]\n[data]\nsource = \"csv\"\ntrain = \"t.csv\"\nlabel_column = \"y\"\n[space]\n"
                             "model = \"mlp\"\nlr = [0.1, 0.2, 0.3]\n";
    return parse_spec_string(text, (tmp.path() / "specs").string(), "s.toml").value();
  };
  const ExperimentLookup experiments = [](const std::string& id) -> std::optional<KnownExperiment> {
    if (id == "exp-3") return KnownExperiment{"/state/experiments/exp-3", true};
    if (id == "exp-4") return KnownExperiment{"/state/experiments/exp-4", false};
    return std::nullopt;
  };
  auto spec = parse("\"exp-3\", \"local-run\", \"./exp-3\"");
  BOOST_REQUIRE(resolve_warm_start_ids(spec, experiments).ok());
  BOOST_REQUIRE_EQUAL(spec.warm_start.size(), 3u);
  BOOST_TEST(spec.warm_start[0] == "/state/experiments/exp-3");
  BOOST_TEST(spec.warm_start[1] == (tmp.path() / "specs" / "local-run").string(), "a directory stays one");
  BOOST_TEST(spec.warm_start[2] == (tmp.path() / "specs" / "exp-3").string(), "a path is never an id");

  spec = parse("\"exp-9\"");
  auto unknown = resolve_warm_start_ids(spec, experiments);
  BOOST_TEST(!unknown.ok());
  BOOST_TEST(unknown.message() ==
             "[experiment] warm_start: \"exp-9\" is neither an experiment of this coordinator "
             "(see cerebro status) nor a run directory");
  BOOST_TEST((unknown.code() == StatusCode::invalid_argument));
  spec = parse("\"exp-4\"");
  auto running = resolve_warm_start_ids(spec, experiments);
  BOOST_TEST(running.message().find("experiment \"exp-4\" has not finished") != std::string::npos, running.message());
}

// A tpe replay hears the original's epoch ends in commit order:
// an epoch ends with its last partition's unit, a diverged unit ends its
// config at once, and each carries the config's training time so far.
BOOST_AUTO_TEST_CASE(the_epoch_ends_of_a_unit_log_in_commit_order) {
  std::vector<UnitLogEntry> log{entry(0, 0, 0), entry(1, 1, 0), entry(0, 1, 0),
                                entry(1, 0, 0), entry(2, 0, 0), entry(0, 0, 1)};
  for (size_t i = 0; i < log.size(); ++i) log[i].train_s = 1.0 + static_cast<double>(i);
  log[4].status = UnitStatus::diverged;
  auto ends = epoch_ends_of(log, kPartitions);
  BOOST_REQUIRE_EQUAL(ends.size(), 3u);
  BOOST_TEST(ends[0].config == 0);
  BOOST_TEST(ends[0].epoch == 0);
  BOOST_TEST(ends[0].train_seconds == 1.0 + 3.0);
  BOOST_TEST(ends[1].config == 1);
  BOOST_TEST(ends[1].train_seconds == 2.0 + 4.0);
  BOOST_TEST(!ends[1].diverged);
  BOOST_TEST(ends[2].config == 2);
  BOOST_TEST(ends[2].diverged);
}
