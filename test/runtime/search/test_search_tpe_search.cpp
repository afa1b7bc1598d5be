// search = "tpe" (runtime/search/tpe_search.hpp) driven through
// ExperimentControl as the scheduler actor drives it: proposals as slots free,
// at most in_flight live, failures freeing slots, the pruner, resume
// re-deriving every proposal, warm-start observations, TPE against random
// search on a smooth objective, and the spec's checks.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/search/factory.hpp"
#include "runtime/search/ordered_replay.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/search/tpe_search.hpp"

using namespace cerebro;
using nlohmann::json;

namespace {

json space3() {
  return json::parse(R"({
    "x": {"dist": "uniform", "low": -5.0, "high": 5.0},
    "lr": {"dist": "loguniform", "low": 1e-5, "high": 0.1},
    "act": ["relu", "tanh", "sigmoid", "gelu"]
  })");
}

// Five hyper-parameters: space3 plus a second uniform and an int_uniform.
json space5() {
  json space = space3();
  space["y"] = json::parse(R"({"dist": "uniform", "low": -5.0, "high": 5.0})");
  space["width"] = json::parse(R"({"dist": "int_uniform", "low": 1, "high": 64})");
  return space;
}

// Smooth, best (1.0) at x = 1.3, lr = 10^-3.2, act = tanh (and y = -2.1,
// width = 40 where the space has them); in (0, 1].
double accuracy_of(const json& p) {
  const double x = p.at("x").get<double>();
  const double log_lr = std::log10(p.at("lr").get<double>());
  const double act = p.at("act") == "tanh" ? 0.0 : p.at("act") == "gelu" ? 0.15 : 0.3;
  double loss = std::pow((x - 1.3) / 5, 2) + std::pow((log_lr + 3.2) / 2, 2) + act;
  if (p.contains("y")) loss += std::pow((p.at("y").get<double>() + 2.1) / 5, 2);
  if (p.contains("width")) loss += std::pow((static_cast<double>(p.at("width").get<int64_t>()) - 40.0) / 32, 2);
  return 1.0 / (1.0 + loss);
}

// Deterministic across restarts: the lowest (config, partition) eligible.
class FirstEligiblePolicy : public SchedulingPolicy {
 public:
  std::string name() const override { return "first-eligible"; }
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override {
    auto units = book.eligible_units(w);
    if (units.empty()) return std::nullopt;
    return *std::min_element(units.begin(), units.end());
  }
};

struct Options {
  int samples = 12;
  int in_flight = 3;
  int epochs = 2;
  int partitions = 2;
  int workers = 3;
  uint64_t seed = 7;
  std::string pruner;  // "", "asha", "hyperband"
  int max_epochs = 0;
  std::vector<TpeObservation> warm;
  bool five_params = false;  // space5 instead of space3
  int startup = 4;
  std::vector<Objective> objectives;
};

// A fake model size: grows with x (so accuracy and size pull apart).
Result<double> fake_parameters(const json& p) { return 1000.0 * (p.at("x").get<double>() + 6.0); }

std::unique_ptr<SearchProcedure> make_tpe(const Options& o) {
  TpeSearchOptions t;
  t.samples = o.samples;
  t.in_flight = o.in_flight;
  t.epochs = o.pruner.empty() ? o.epochs : o.max_epochs;
  t.pruner = parse_pruner(o.pruner).value_or(Pruner::none);
  t.tpe.startup = o.startup;
  t.warm = o.warm;
  t.objectives = o.objectives;
  t.parameters_of = fake_parameters;
  auto made = TpeProcedure::create(o.five_params ? space5() : space3(), o.seed, t);
  BOOST_REQUIRE_MESSAGE(made.ok(), made.error());
  return std::move(made).value();
}

// The shell: creates every proposal, runs dispatched units in FIFO order,
// scores a config's epoch by accuracy_of(params) (a little better each epoch).
struct Driver {
  explicit Driver(const Options& o) : Driver(o, make_tpe(o)) {}
  Driver(const Options& o, std::unique_ptr<SearchProcedure> procedure)
      : options(o),
        control(o.partitions, o.seed, Metric::val_accuracy, 3, std::make_unique<FirstEligiblePolicy>(),
                std::move(procedure)) {
    std::vector<PartitionId> all;
    for (PartitionId p = 0; p < o.partitions; ++p) all.push_back(p);
    for (WorkerId w = 0; w < o.workers; ++w) control.add_worker(w, all);
  }

  void create_proposals() {
    for (auto& p : control.take_proposals()) {
      proposals[p.config] = p.params;
      if (reject.count(p.config))
        control.on_config_rejected(p.config, "test: pilot check failed");
      else
        control.on_config_created(p.config);
    }
  }

  int live() const {
    int n = 0;
    for (auto c : control.book().configs()) {
      auto s = control.book().state(c);
      n += s == ConfigState::pending_epoch || s == ConfigState::awaiting_decision;
    }
    return n;
  }

  // Runs until done, or until `stop_after` commits (-1: no limit).
  void run(int stop_after = -1) {
    create_proposals();
    while (!control.all_done()) {
      for (const auto& d : control.dispatch()) running.push_back(d);
      BOOST_REQUIRE_MESSAGE(!running.empty(), "nothing runs and the experiment is not done");
      max_live = std::max(max_live, live());
      if (stop_after >= 0 && static_cast<int>(log.size()) >= stop_after) return;
      Dispatch d = newest_first ? running.back() : running.front();
      if (newest_first)
        running.pop_back();
      else
        running.pop_front();
      UnitLogEntry e;
      e.seq = static_cast<int64_t>(log.size()) + 1;
      e.config = d.unit.config;
      e.partition = d.unit.partition;
      e.epoch = d.unit.epoch;
      e.worker = d.worker;
      e.examples = 10;
      e.train_loss = 1.0;
      e.has_validation = d.validate;
      if (d.validate) {
        e.val_accuracy = accuracy_of(proposals.at(e.config)) * (0.9 + 0.01 * e.epoch);
        e.val_loss = 1 - e.val_accuracy;
      }
      control.on_committed(d.worker, e);
      log.push_back(e);
      create_proposals();
    }
  }

  double best() const {
    double best = 0;
    for (const auto& e : log)
      if (e.has_validation) best = std::max(best, e.val_accuracy);
    return best;
  }

  Options options;
  ExperimentControl control;
  std::map<ConfigId, json> proposals;
  std::set<ConfigId> reject;
  bool newest_first = false;  // another schedule: the unit dispatched last runs first
  std::deque<Dispatch> running;
  std::vector<UnitLogEntry> log;
  int max_live = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tpe_search)

BOOST_AUTO_TEST_CASE(proposes_in_flight_configs_then_one_per_freed_slot_up_to_samples) {
  Options o;
  Driver run(o);
  // At the start: in_flight proposals, ids 0.., the random startup draws (a
  // TPE run begins as a random run with the same seed).
  auto first = run.control.take_proposals();
  BOOST_REQUIRE_EQUAL(first.size(), 3u);
  auto random = sample_random(space3(), 3, o.seed).value();
  for (size_t i = 0; i < first.size(); ++i) {
    BOOST_TEST(first[i].config == static_cast<ConfigId>(i));
    BOOST_TEST(first[i].params == random[i].params);
    BOOST_TEST(first[i].epochs == o.epochs);
    run.proposals[first[i].config] = first[i].params;
    run.control.on_config_created(first[i].config);
  }
  BOOST_TEST(!run.control.all_done());
  run.run();
  BOOST_TEST(run.proposals.size() == 12u);
  BOOST_TEST(run.max_live == 3);
  for (const auto& [c, outcome] : run.control.outcomes()) BOOST_TEST(outcome.status == ConfigStatus::completed);
  BOOST_TEST(run.control.units_done() == 12 * o.epochs * o.partitions);
}

BOOST_AUTO_TEST_CASE(same_seed_and_history_same_proposals_another_seed_others) {
  Options o;
  Driver a(o), b(o);
  a.run();
  b.run();
  BOOST_TEST(a.proposals == b.proposals);
  o.seed = 8;
  Driver c(o);
  c.run();
  BOOST_TEST(a.proposals != c.proposals);
}

BOOST_AUTO_TEST_CASE(a_rejected_or_failed_config_frees_its_slot) {
  Options o;
  Driver run(o);
  run.reject = {1, 5};
  run.run();
  BOOST_TEST(run.proposals.size() == 12u);
  BOOST_TEST(run.control.outcomes().at(1).status == ConfigStatus::failed);
  BOOST_TEST(run.control.outcomes().at(5).status == ConfigStatus::failed);
  BOOST_TEST(run.control.outcomes().at(11).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(resume_mid_search_proposes_exactly_what_an_uninterrupted_run_does) {
  Options o;
  o.samples = 16;
  Driver whole(o);
  whole.run();
  for (int stop_after : {5, 17, 30}) {
    Driver first(o);
    first.run(stop_after);
    // What the store holds at the stop: the created configs and the log.
    std::vector<ConfigRecord> records;
    for (auto c : first.control.book().configs())
      records.push_back({c, first.proposals.at(c), ConfigStatus::running, ""});
    Driver resumed(o);
    resumed.control.set_recorded_configs(records);
    auto restored = resumed.control.restore(first.log).value();
    BOOST_TEST(restored.units == static_cast<int64_t>(first.log.size()));
    resumed.proposals = first.proposals;
    resumed.log = first.log;
    resumed.run();
    BOOST_TEST(resumed.proposals == whole.proposals, "stopped after " << stop_after << " commits");
    BOOST_TEST(resumed.log.size() == whole.log.size());
  }
}

// The original's epoch ends in commit order (each epoch's last unit), as
// runtime/run's epoch_ends_of reads them from a unit log.
std::vector<RecordedEpochEnd> epoch_ends(const Driver& run) {
  std::vector<RecordedEpochEnd> order;
  std::map<std::pair<ConfigId, int32_t>, int> units;
  for (const auto& e : run.log)
    if (++units[{e.config, e.epoch}] == run.options.partitions) order.push_back({e.config, e.epoch, false, 0});
  return order;
}

BOOST_AUTO_TEST_CASE(a_replay_hears_the_original_order_of_epoch_ends_and_proposes_the_same) {
  for (const std::string pruner : {"", "asha"}) {
    BOOST_TEST_CONTEXT("pruner '" << pruner << "'") {
      Options o;
      o.samples = 14;
      o.pruner = pruner;
      o.max_epochs = 4;
      Driver original(o);
      original.run();
      // Another schedule alone conditions the model on another history.
      Driver other(o);
      other.newest_first = true;
      other.run();
      BOOST_TEST((other.proposals != original.proposals));
      // The same schedule, with the epoch ends handed on in the original's order.
      Driver replay(o, std::make_unique<OrderedReplay>(make_tpe(o), epoch_ends(original)));
      replay.newest_first = true;
      replay.run();
      BOOST_TEST((replay.proposals == original.proposals));
      for (const auto& [c, outcome] : original.control.outcomes())
        BOOST_TEST(to_string(replay.control.outcomes().at(c).status) == to_string(outcome.status), "config " << c);
      const auto& wrapper = dynamic_cast<const OrderedReplay&>(replay.control.search());
      BOOST_TEST(!wrapper.diverged());
      BOOST_TEST(wrapper.waiting() == 0u);
    }
  }
}

// A replay that leaves the original's path (here: an epoch end the recorded
// order does not have) stops ordering and still finishes: nothing waits for
// an epoch end that never comes.
BOOST_AUTO_TEST_CASE(a_replay_off_the_original_path_stops_ordering_and_finishes) {
  Options o;
  Driver original(o);
  original.run();
  auto order = epoch_ends(original);
  order.erase(std::find_if(order.begin(), order.end(), [](const RecordedEpochEnd& e) { return e.config == 2; }));
  Driver replay(o, std::make_unique<OrderedReplay>(make_tpe(o), order));
  replay.newest_first = true;
  replay.run();
  BOOST_TEST(replay.control.all_done());
  BOOST_TEST(replay.proposals.size() == 12u);
  const auto& wrapper = dynamic_cast<const OrderedReplay&>(replay.control.search());
  BOOST_TEST(wrapper.diverged());
  BOOST_TEST(wrapper.waiting() == 0u);
}

BOOST_AUTO_TEST_CASE(asha_pruner_stops_configs_at_rungs_and_fits_the_highest_rung_with_enough_scores) {
  Options o;
  o.pruner = "asha";
  o.max_epochs = 4;
  o.samples = 20;
  o.partitions = 1;
  Driver run(o);
  run.run();
  BOOST_TEST(run.proposals.size() == 20u);
  int stopped = 0, completed = 0;
  for (const auto& [c, outcome] : run.control.outcomes()) {
    stopped += outcome.status == ConfigStatus::stopped;
    completed += outcome.status == ConfigStatus::completed;
  }
  BOOST_TEST(stopped > 0);
  BOOST_TEST(completed > 0);
  BOOST_TEST(stopped + completed == 20);
  const auto& tpe = dynamic_cast<const TpeProcedure&>(run.control.search());
  BOOST_TEST(tpe.model_level() >= 1);  // the model was used, fitted at a rung or max_epochs
}

BOOST_AUTO_TEST_CASE(hyperband_pruner_runs_brackets) {
  Options o;
  o.pruner = "hyperband";
  o.max_epochs = 4;
  o.samples = 12;
  o.partitions = 1;
  Driver run(o);
  run.run();
  BOOST_TEST(run.proposals.size() == 12u);
  // Bracket 2 (configs 2, 5, ...) starts at 4 epochs = max_epochs: never stopped.
  for (ConfigId c = 2; c < 12; c += 3) BOOST_TEST(run.control.outcomes().at(c).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(warm_observations_end_the_random_startup) {
  Options o;
  Driver cold(o);
  auto cold_first = cold.control.take_proposals();
  std::vector<TpeObservation> warm;
  const auto sampled = sample_random(space3(), 6, 99).value();
  for (const auto& c : sampled) warm.push_back({c.params, {accuracy_of(c.params)}});
  o.warm = warm;
  Driver hot(o);
  auto hot_first = hot.control.take_proposals();
  BOOST_REQUIRE_EQUAL(hot_first.size(), 3u);
  // With 6 >= startup (4) observations the model proposes from the start.
  BOOST_TEST(hot_first[0].reason.find("TPE over 6 finished") != std::string::npos, hot_first[0].reason);
  BOOST_TEST(cold_first[0].reason.find("random startup") != std::string::npos, cold_first[0].reason);
}

// TPE against random search through the whole procedure (ExperimentControl,
// 3 configs in flight, the constant liar): 5 hyper-parameters, 40 configs,
// the best accuracy reached; over 20 seeds (random search with the same seed
// draws the same first 10 configs).
BOOST_AUTO_TEST_CASE(tpe_beats_random_on_a_smooth_objective_in_most_seeds) {
  int tpe_wins = 0;
  const int seeds = 20;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
    Options o;
    o.samples = 40;
    o.epochs = 1;
    o.partitions = 1;
    o.seed = seed;
    o.five_params = true;
    o.startup = 10;
    Driver tpe(o);
    tpe.run();
    double random_best = 0;
    const auto sampled = sample_random(space5(), o.samples, seed).value();
    for (const auto& c : sampled) random_best = std::max(random_best, accuracy_of(c.params) * 0.9);
    tpe_wins += tpe.best() > random_best;
  }
  BOOST_TEST_MESSAGE("tpe (async, 3 in flight) beat random search in " << tpe_wins << " of " << seeds << " seeds");
  BOOST_TEST(tpe_wins >= 16);
}

BOOST_AUTO_TEST_CASE(spec_errors_name_the_key) {
  const std::string data = "[data]\nsource = \"idx\"\npath = \"/nonexistent\"\n";
  auto error_of = [&](const std::string& experiment, const std::string& space) {
    auto spec = parse_spec_string("[experiment]\n" + experiment + "\n" + data + "[space]\n" + space, "", "t.toml");
    return spec.ok() ? std::string() : spec.error();
  };
  const std::string space = "model = \"mlp\"\nlr = { dist = \"loguniform\", low = 1e-4, high = 0.1 }\n";
  BOOST_TEST(error_of("search = \"tpe\"\nsamples = 8", space).empty());
  BOOST_TEST(error_of("search = \"tpe\"\nsamples = 8\npruner = \"asha\"\nmax_epochs = 4", space).empty());
  auto e = error_of("search = \"tpe\"", space);
  BOOST_TEST(e.find("samples is required") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8", "model = \"mlp\"\nlr = 0.01\n");
  BOOST_TEST(e.find("nothing to search") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8", "model = \"mlp\"\nlr = [0.01, 0.1]\n");
  BOOST_TEST(e.find("samples = 8 but the [space] (lists only) has 2 combinations") != std::string::npos, e);
  e = error_of("search = \"grid\"\npruner = \"asha\"", "model = \"mlp\"\nlr = [0.01, 0.1]\n");
  BOOST_TEST(e.find("pruner applies only to search = \"tpe\"") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8\npruner = \"median\"", space);
  BOOST_TEST(e.find("pruner must be \"asha\" or \"hyperband\"") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8\nmax_epochs = 4", space);
  BOOST_TEST(e.find("only with a pruner") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8\npruner = \"asha\"", space);
  BOOST_TEST(e.find("max_epochs is required") != std::string::npos, e);
  e = error_of("search = \"grid\"\nwarm_start = [\"runs/a\"]", "model = \"mlp\"\nlr = [0.01, 0.1]\n");
  BOOST_TEST(e.find("warm_start does not apply to search = \"grid\"") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8\nfrom_checkpoint = true", space);
  BOOST_TEST(e.find("from_checkpoint needs warm_start") != std::string::npos, e);
  e = error_of("search = \"tpe\"\nsamples = 8\ngamma = 0", space);
  BOOST_TEST(e.find("gamma must be a number in (0, 1]") != std::string::npos, e);
}

// MOTPE: with [val_accuracy, parameters] every observation carries both
// (parameters from the run's model builder, train_seconds from the units), the
// search completes, and it proposes otherwise than with accuracy alone.
BOOST_AUTO_TEST_CASE(several_objectives_are_modelled_by_motpe) {
  Options single;
  single.samples = 16;
  Driver one(single);
  one.run();
  Options several = single;
  several.objectives = {*parse_objective("val_accuracy"), *parse_objective("parameters"),
                        *parse_objective("train_seconds"), *parse_objective("inference_ms")};
  Driver motpe(several);
  motpe.run();
  BOOST_TEST(motpe.proposals.size() == 16u);
  // The startup draws agree (random), the model's proposals do not.
  for (ConfigId c = 0; c < 3; ++c) BOOST_TEST(motpe.proposals.at(c) == one.proposals.at(c));
  BOOST_TEST(motpe.proposals != one.proposals);
  // Smaller models are preferred too: the mean x of the model's proposals is lower.
  auto mean_x = [](const Driver& d) {
    double sum = 0;
    int n = 0;
    for (const auto& [c, p] : d.proposals)
      if (c >= 8) sum += p.at("x").get<double>(), ++n;
    return sum / n;
  };
  BOOST_TEST(mean_x(motpe) < mean_x(one));
  // Several objectives and warm start do not mix (one score per earlier config).
  TpeSearchOptions bad;
  bad.objectives = several.objectives;
  bad.parameters_of = fake_parameters;
  bad.warm = {{json{{"x", 0.0}, {"lr", 0.001}, {"act", "relu"}}, {0.5}}};
  auto refused = TpeProcedure::create(space3(), 1, bad);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.error().find("warm_start with several objectives is not supported") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_objectives_parse_with_directions_and_bad_ones_are_named) {
  const std::string rest =
      "[data]\nsource = \"idx\"\npath = \"/nonexistent\"\n[space]\nmodel = \"mlp\"\n"
      "lr = { dist = \"loguniform\", low = 1e-4, high = 0.1 }\n";
  auto parse = [&](const std::string& metric) {
    return parse_spec_string("[experiment]\nsearch = \"random\"\nsamples = 4\nmetric = " + metric + "\n" + rest, "",
                             "t.toml");
  };
  auto spec = parse("[\"parameters\", \"val_loss\", \"train_seconds\"]").value();
  BOOST_REQUIRE_EQUAL(spec.objectives.size(), 3u);
  BOOST_TEST(spec.objectives[0].name == "parameters");
  BOOST_TEST(!spec.objectives[0].maximize());
  BOOST_TEST(!spec.objectives[1].maximize());
  BOOST_TEST(spec.metric == Metric::val_loss);  // the first task metric ranks the run
  BOOST_TEST(parse("[\"val_accuracy\", \"inference_ms\"]").value().objectives[0].maximize());
  BOOST_TEST(parse("\"val_accuracy\"").value().objectives.empty());
  auto error = [&](const std::string& metric) {
    auto r = parse(metric);
    return r.ok() ? std::string() : r.error();
  };
  auto e = error("[\"val_accuracy\", \"flops\"]");
  BOOST_TEST(e.find("[experiment] metric has an unknown objective \"flops\": objectives are") != std::string::npos, e);
  e = error("[\"parameters\", \"train_seconds\"]");
  BOOST_TEST(e.find("needs a task metric among its objectives") != std::string::npos, e);
  e = error("[\"val_accuracy\"]");
  BOOST_TEST(e.find("needs two or more objectives") != std::string::npos, e);
  e = error("[\"val_accuracy\", \"val_accuracy\"]");
  BOOST_TEST(e.find("names \"val_accuracy\" twice") != std::string::npos, e);
}

BOOST_AUTO_TEST_SUITE_END()
