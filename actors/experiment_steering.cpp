#include "actors/experiment_steering.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "models/pipeline_runner.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "runtime/run/new_config.hpp"
#include "models/run_setup.hpp"
#include "models/predict.hpp"
#include "runtime/api/experiment_view.hpp"
#include "runtime/api/pareto_view.hpp"
#include "runtime/base/file_io.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/store/run_summary.hpp"
#include "runtime/spec/steering.hpp"
#include "runtime/api/api_route.hpp"
#include "runtime/viz/html_report.hpp"
#include "runtime/viz/run_view.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

// Epochs that ended (validated); the epoch in progress is left out.
std::set<int32_t> validated_epochs(const std::vector<UnitLogEntry>& log, ConfigId config) {
  std::set<int32_t> out;
  for (const auto& e : log)
    if (e.config == config && e.has_validation) out.insert(e.epoch);
  return out;
}

Result<ConfigRecord> find_config(const StateStore& store, ConfigId id) {
  auto configs = store.configs();
  for (auto& c : configs)
    if (c.id == id) return c;
  if (configs.empty()) return Status::not_found(fmt::format("the experiment has no config {} (it has none yet)", id));
  return Status::not_found(
      fmt::format("the experiment has no config {} (configs: {}..{})", id, configs.front().id, configs.back().id));
}

Result<models::ShapeInfo> stored_shape(const StateStore& store) {
  auto text = store.get_meta("shape");
  if (!text) return Status::failed_precondition("the run has no recorded data shape (it predates exports by the REPL)");
  auto j = nlohmann::json::parse(*text);
  models::ShapeInfo shape{j.at("sample_shape").get<std::vector<int64_t>>(), j.at("num_classes").get<int64_t>()};
  shape.task = datasets::parse_task_kind(j.value("task", std::string())).value_or(datasets::TaskKind::classification);
  shape.target_stddev = j.value("target_stddev", std::vector<float>{});
  shape.beam = j.value("beam", int64_t{1});
  return shape;
}

// "whole" or "as a pipeline over k stages".
std::string describe_split(int32_t stages) {
  return stages >= 2 ? fmt::format("as a pipeline over {} stages", stages) : std::string("whole");
}

nlohmann::json show_json(const StateStore& store, const ConfigRecord& record) {
  const auto shared = store.unit_log_shared();
  const auto& log = *shared;
  auto validated = validated_epochs(log, record.id);
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& m : epoch_metrics(log, record.id)) {
    if (!validated.count(m.epoch)) continue;
    nlohmann::json epoch{
        {"epoch", m.epoch}, {"train_loss", m.train_loss}, {"val_loss", m.val_loss}, {"seconds", m.seconds}};
    for (const auto& [name, value] : named_values(m)) epoch[name] = value;
    epochs.push_back(std::move(epoch));
  }
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& d : store.decisions())
    if (is_user_action(d) && d.value("config", -1) == record.id) actions.push_back(d);
  return {{"config", record.id},
          {"params", api::params_as_submitted(record.params, api::stored_spec_dir(store))},
          {"status", to_string(record.status)},
          {"error", record.error},
          {"metric", to_string(stored_metric(store))},
          {"epochs", epochs},
          {"actions", actions}};
}

nlohmann::json top_json(const StateStore& store, int32_t rows, bool paused) {
  const Metric stored = stored_metric(store);
  const std::string metric = to_string(stored);
  auto ranked = rank_configs(store.configs(), *store.unit_log_shared(), stored);
  nlohmann::json out = nlohmann::json::array();
  const std::string spec_dir = api::stored_spec_dir(store);
  int rank = 0;
  for (const auto& s : ranked) {
    if (rows > 0 && rank >= rows) break;
    out.push_back({{"rank", ++rank},
                   {"config", s.id},
                   {"status", to_string(s.status)},
                   {"epochs", s.epochs.size()},
                   {"metric", s.metric ? nlohmann::json(*s.metric) : nlohmann::json(nullptr)},
                   {"params", api::params_as_submitted(s.params, spec_dir)}});
  }
  // Several objectives: the Pareto front beside the ranking (null for one).
  return {{"metric", metric},
          {"paused", paused},
          {"configs", ranked.size()},
          {"rows", out},
          {"pareto", api::pareto_of(store)}};
}

Result<control_reply> export_config(const StateStore& store, const ConfigRecord& record,
                                    const std::string& scratch_dir) {
  auto shape = stored_shape(store);
  if (!shape.ok()) return shape.status();
  auto state = store.latest_state(record.id);
  if (!state.ok()) return state.status();
  auto tmp = fs::path(scratch_dir) /
             fmt::format(".export-{}-{}.pt", record.id, std::chrono::steady_clock::now().time_since_epoch().count());
  // A pipeline config's state is exported as the whole model's.
  auto whole = models::whole_model_state(record.params, *shape, *state);
  if (!whole.ok()) return whole.status();
  auto exported = models::export_model(record.params, *shape, *whole, tmp.string());
  if (exported.ok()) {
    // What `predict` needs travels inside the file (models/predict.hpp).
    if (auto info = store.get_meta("model_info"))
      exported = models::attach_model_info(tmp.string(), nlohmann::json::parse(*info));
  }
  if (!exported.ok()) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return exported;
  }
  auto file = read_whole_file(tmp.string());
  std::error_code ec;
  fs::remove(tmp, ec);
  if (!file.ok()) return file.status();
  control_reply reply;
  reply.file = std::move(file).value();
  reply.json = nlohmann::json{{"config", record.id}, {"bytes", reply.file.size()}}.dump();
  return reply;
}

// One of the run's files by name (the request's first setting, api::RunFile): what a finished run left in
// `run_dir`, or its report drawn from the store now (also while it runs).
Result<control_reply> run_file(const StateStore& store, const control_request& r, const std::string& run_dir) {
  auto file = api::parse_run_file(r.settings.empty() ? std::string() : r.settings.front());
  if (!file) return Status::invalid_argument("no such run file");
  control_reply reply;
  if (*file == api::RunFile::report) {
    auto view = run_view_in(store, run_dir);
    if (!view.ok()) return view.status();
    reply.file = render_html_report(*view);
  } else {
    const auto path = fs::path(run_dir) / api::to_string(*file);
    if (!fs::exists(path))
      return Status::not_found(
          fmt::format("the experiment has no {} yet: a run writes it when it ends", api::to_string(*file)));
    auto contents = read_whole_file(path.string());
    if (!contents.ok()) return contents.status();
    reply.file = std::move(contents).value();
  }
  reply.json = nlohmann::json{{"file", api::to_string(*file)}, {"bytes", reply.file.size()}}.dump();
  return reply;
}

}  // namespace

Result<control_reply> answer_from_store(const StateStore& store, const control_request& r,
                                        const std::string& scratch_dir, bool paused) {
  if (r.command == SteeringCommand::run_file) return run_file(store, r, scratch_dir);
  control_reply reply;
  if (r.command == SteeringCommand::top) {
    reply.json = top_json(store, r.rows, paused).dump();
    return reply;
  }
  if (r.command == SteeringCommand::detail) {
    reply.json = api::experiment_view(api::ExperimentFacts{store, paused}).dump();
    return reply;
  }
  if (r.command == SteeringCommand::units) {
    reply.json = api::units_view(*store.unit_log_shared(), r.since).dump();
    return reply;
  }
  if (r.command == SteeringCommand::configs) {
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& c : store.configs()) ids.push_back(c.id);
    reply.json = nlohmann::json{{"configs", ids}}.dump();
    return reply;
  }
  if (r.command != SteeringCommand::show && r.command != SteeringCommand::export_model)
    return Status::invalid_argument(fmt::format("\"{}\" is not a read-only command", to_string(r.command)));
  auto record = find_config(store, r.config);
  if (!record.ok()) return record.status();
  if (r.command == SteeringCommand::export_model) return export_config(store, *record, scratch_dir);
  reply.json = show_json(store, *record).dump();
  return reply;
}

ExperimentSteering::ExperimentSteering(SteeringContext context) : context_(std::move(context)) {
  context_.store->put_meta("shape", nlohmann::json{{"sample_shape", context_.shape.sample_shape},
                                                   {"num_classes", context_.shape.num_classes},
                                                   {"task", datasets::to_string(context_.shape.task)},
                                                   {"target_stddev", context_.shape.target_stddev},
                                                   {"beam", context_.shape.beam}}
                                        .dump());
}

Result<SteeringPlan> ExperimentSteering::plan(const control_request& r) {
  const SteeringCommand cmd = r.command;
  const SteeringCommandInfo* info = find_steering_command(cmd);
  if (!info) return Status::invalid_argument(fmt::format("unknown command {}", static_cast<int>(cmd)));
  SteeringPlan plan;
  if (info->reads_store) {
    auto reply = answer_from_store(*context_.store, r, context_.run_dir, paused_);
    if (!reply.ok()) return reply.status();
    plan.reply = std::move(reply).value();
    return plan;
  }
  if (cmd == SteeringCommand::pause || cmd == SteeringCommand::resume) {
    plan.change = ScheduleChange{cmd};
    return plan;
  }
  if (cmd == SteeringCommand::stop) {
    auto record = find_config(*context_.store, r.config);
    if (!record.ok()) return record.status();
    plan.change = ScheduleChange{cmd, r.config};
    return plan;
  }
  if (cmd == SteeringCommand::add || cmd == SteeringCommand::clone) return add(r);
  return Status::invalid_argument(fmt::format("\"{}\" is not a steering command", to_string(cmd)));
}

Result<control_reply> ExperimentSteering::finish(const ScheduleChange& change, const Status& applied) {
  if (!applied.ok()) {
    if (change.command == SteeringCommand::add)
      context_.store->put_config({change.config, nlohmann::json::parse(change.params_json), ConfigStatus::failed,
                                  "not added: " + applied.message()});
    return applied;
  }
  control_reply reply;
  switch (change.command) {
    case SteeringCommand::pause:
    case SteeringCommand::resume:
      paused_ = change.command == SteeringCommand::pause;
      reply.json = nlohmann::json{{"paused", paused_}}.dump();
      return reply;
    case SteeringCommand::stop: {
      auto record = find_config(*context_.store, change.config);
      if (!record.ok()) return record.status();
      record->status = ConfigStatus::stopped;
      context_.store->put_config(*record);
      reply.json = nlohmann::json{{"config", change.config}, {"status", to_string(ConfigStatus::stopped)}}.dump();
      return reply;
    }
    case SteeringCommand::add:
      reply.json = nlohmann::json{{"config", change.config},
                                  {"params", nlohmann::json::parse(change.params_json)},
                                  {"cloned_from", change.cloned_from},
                                  {"stages", change.stages}}
                       .dump();
      return reply;
    default: return Status::internal(fmt::format("\"{}\" changes nothing to answer", to_string(change.command)));
  }
}

// add: a fresh config (the experiment's first config's parameters with the
// settings applied); clone: the parent's parameters with the settings
// applied, starting from the parent's latest state (weights and optimizer
// state) instead of a fresh initialisation.
Result<SteeringPlan> ExperimentSteering::add(const control_request& r) {
  if (!context_.can_add)
    return Status::failed_precondition(
        "configs can be added to grid and random searches only; this experiment's "
        "search procedure plans its configs up front");
  const bool clone = r.command == SteeringCommand::clone;
  auto configs = context_.store->configs();
  if (configs.empty()) return Status::failed_precondition("the experiment has no config to start from");
  ConfigRecord base = configs.front();
  if (clone) {
    auto parent = find_config(*context_.store, r.config);
    if (!parent.ok()) return parent.status();
    base = *parent;
  }
  auto params = apply_settings(base.params, r.settings);
  if (!params.ok()) return params.status();
  // A model file as the views show it (relative to the spec's folder) is that folder's.
  *params = api::params_on_server(*params, api::stored_spec_dir(*context_.store));
  // Parameters the model cannot take are bad input (the HTTP API answers 400).
  if (auto ok = models::check_params(*params, context_.shape); !ok.ok())
    return ok.code() == StatusCode::unknown ? Status::invalid_argument(ok.message()) : ok;
  // How it trains, planned as the run's own configs are: whole, or over k
  // pipeline stages; a model the plan must split but cannot is refused with
  // the plan's reason (it names the key).
  auto stages = models::planned_stages(*params, context_.shape, context_.pipeline_limits());
  if (!stages.ok()) return stages.status();
  const ConfigId id = context_.next_config;
  auto state = initial_state_of(clone, base, *params, *stages, id);
  if (!state.ok()) return state.status();
  // Durable before the scheduler hears of it, as a run's own configs are.
  NewConfig config{id, *params, *stages, std::move(state).value(),
                   parameters_to_keep(context_.count_parameters, *params, context_.shape)};
  if (auto st = store_new_config(*context_.store, config); !st.ok()) return st;
  ++context_.next_config;
  // A clone is an add for the scheduler: it starts from the state stored above.
  SteeringPlan plan;
  plan.change =
      ScheduleChange{SteeringCommand::add, id, params->dump(), context_.epochs, clone ? base.id : -1, *stages};
  return plan;
}

// The new config's first state: a clone's parent's latest (which must fit
// the new parameters and keep the parent's split), or a fresh one (framed
// over its stages for a pipeline).
Result<std::string> ExperimentSteering::initial_state_of(bool clone, const ConfigRecord& base,
                                                         const nlohmann::json& params, int32_t stages, ConfigId id) {
  if (clone) {
    auto state = context_.store->latest_state(base.id);
    if (!state.ok()) return state.status();
    // A clone keeps its parent's split: the same architecture in the same
    // stages, from the parent's (framed) state.
    auto parent_stages = stage_count_of(*state);
    if (!parent_stages.ok()) return parent_stages.status().with_context(fmt::format("config {}'s state", base.id));
    if (*parent_stages != stages)
      return Status::invalid_argument(fmt::format(
          "config {} trains {}, but with these settings the clone would train {}: a clone keeps its parent's "
          "split (change only training hyper-parameters such as lr when cloning)",
          base.id, describe_split(*parent_stages), describe_split(stages)));
    // The parent's state must fit the new parameters (same architecture and optimizer).
    auto fits = *parent_stages >= 2
                    ? models::evaluate_pipeline_state(params, context_.shape, *state, *context_.validation)
                    : models::evaluate_state(params, context_.shape, *state, *context_.validation);
    if (!fits.ok())
      return Status::invalid_argument(
          fmt::format("config {}'s state does not fit the new parameters (change only "
                      "training hyper-parameters such as lr when cloning): {}",
                      base.id, fits.error()));
    return state;
  }
  if (stages >= 2) {
    // Its stages' states framed as one, weights drawn as a run's own pipeline config's.
    auto state = models::initial_pipeline_state(params, context_.shape, stages, unit_seed(context_.seed, {id, -1, -1}));
    if (!state.ok())
      return Status::invalid_argument("the new config cannot be split into its pipeline stages: " + state.error());
    return state;
  }
  auto state = models::initial_state(params, context_.shape, *context_.pilot, unit_seed(context_.seed, {id, -1, -1}));
  if (!state.ok()) return Status::invalid_argument("the new config failed its pilot check: " + state.error());
  return state;
}

}  // namespace cerebro
