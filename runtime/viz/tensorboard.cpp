#include "runtime/viz/tensorboard.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "runtime/spec/metric.hpp"
#include "runtime/viz/proto_wire.hpp"
#include "runtime/viz/tfrecord.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

using proto::Message;

// Field numbers, from the .proto files named in the header.
namespace event {  // tensorflow.Event
constexpr int wall_time = 1, step = 2, file_version = 3, summary = 5;
}
namespace summary {  // tensorflow.Summary and Summary.Value
constexpr int value = 1;
constexpr int tag = 1, simple_value = 2, tensor = 8, metadata = 9;
}  // namespace summary
namespace metadata {  // tensorflow.SummaryMetadata and its PluginData
constexpr int plugin_data = 1;
constexpr int plugin_name = 1, content = 2;
}  // namespace metadata
namespace tensor {  // tensorflow.TensorProto
constexpr int dtype = 1, shape = 2, float_val = 5;
constexpr int dt_float = 1;
}  // namespace tensor
namespace hparams {  // tensorboard.hparams
// HParamsPluginData
constexpr int version = 1, experiment = 2, session_start_info = 3, session_end_info = 4;
// Experiment
constexpr int experiment_description = 1, time_created_secs = 3, hparam_infos = 4, metric_infos = 5,
              experiment_name = 6;
// HParamInfo (DataType: 1 string, 2 bool, 3 float64)
constexpr int info_name = 1, info_type = 4, domain_discrete = 5, domain_interval = 6;
constexpr int type_string = 1, type_bool = 2, type_float64 = 3;
// Interval
constexpr int min_value = 1, max_value = 2;
// MetricInfo, MetricName (DatasetType: 1 training, 2 validation)
constexpr int metric_name = 1, metric_dataset_type = 5;
constexpr int name_group = 1, name_tag = 2;
constexpr int dataset_training = 1, dataset_validation = 2;
// SessionStartInfo (hparams is a map: entries with key 1, value 2)
constexpr int start_hparams = 1, start_model_uri = 2, start_group_name = 4, start_time_secs = 5;
// SessionEndInfo (Status: 1 success, 2 failure, 3 running)
constexpr int end_status = 1, end_time_secs = 2;
constexpr int status_success = 1, status_failure = 2, status_running = 3;
}  // namespace hparams
namespace value {  // google.protobuf.Value, ListValue
constexpr int number = 2, string = 3, boolean = 4;
constexpr int list_values = 1;
}  // namespace value

const char* const kExperimentTag = "_hparams_/experiment";
const char* const kSessionStartTag = "_hparams_/session_start_info";
const char* const kSessionEndTag = "_hparams_/session_end_info";

std::string summary_event(double wall_time, const Message& summary_value) {
  Message summary;
  summary.message(summary::value, summary_value);
  Message ev;
  ev.float64(event::wall_time, wall_time).message(event::summary, summary);
  return ev.data();
}

// A Summary.Value carrying HParamsPluginData: the plugin reads the metadata;
// the tensor is the scalar 0 TensorBoard's own hparams summaries carry.
std::string hparams_event(double wall_time, const char* tag, int data_field, const Message& data) {
  Message plugin_data;
  plugin_data.varint(hparams::version, 0).message(data_field, data);
  Message plugin;
  plugin.bytes(metadata::plugin_name, "hparams").bytes(metadata::content, plugin_data.data());
  Message meta;
  meta.message(metadata::plugin_data, plugin);
  Message null_tensor;
  const float zero = 0;
  null_tensor.varint(tensor::dtype, tensor::dt_float)
      .message(tensor::shape, Message{})
      .packed_floats(tensor::float_val, &zero, 1);
  Message v;
  v.bytes(summary::tag, tag).message(summary::tensor, null_tensor).message(summary::metadata, meta);
  return summary_event(wall_time, v);
}

// A hyper-parameter's value as google.protobuf.Value: numbers, booleans and
// strings as themselves, anything else (lists such as hidden = [64, 32]) as
// its JSON text.
Message param_value(const nlohmann::json& v) {
  Message out;
  if (v.is_number())
    out.float64(value::number, v.get<double>());
  else if (v.is_boolean())
    out.boolean(value::boolean, v.get<bool>());
  else if (v.is_string())
    out.bytes(value::string, v.get<std::string>());
  else
    out.bytes(value::string, v.dump());
  return out;
}

int session_status(ConfigStatus status) {
  switch (status) {
    case ConfigStatus::running: return hparams::status_running;
    case ConfigStatus::diverged:
    case ConfigStatus::failed: return hparams::status_failure;
    case ConfigStatus::completed:
    case ConfigStatus::stopped: return hparams::status_success;
  }
  return 0;
}

std::string config_run_name(ConfigId id) { return tensorboard_config_dir(id); }

// When a config's units ran, from one pass over the log: its first start,
// its last end, when each of its epochs ended (its last unit's end) and which
// epochs validated (seconds since the run's start).
struct ConfigTimes {
  double first_s = 0, last_s = 0;
  std::map<int32_t, double> epoch_end_s;
  std::set<int32_t> validated;
};

std::map<ConfigId, ConfigTimes> config_times(const std::vector<UnitLogEntry>& log) {
  std::map<ConfigId, ConfigTimes> out;
  for (const auto& e : log) {
    auto [it, fresh] = out.try_emplace(e.config);
    auto& t = it->second;
    if (fresh) t.first_s = e.start_s, t.last_s = e.end_s;
    t.first_s = std::min(t.first_s, e.start_s);
    t.last_s = std::max(t.last_s, e.end_s);
    auto& epoch_end = t.epoch_end_s[e.epoch];
    epoch_end = std::max(epoch_end, e.end_s);
    if (e.has_validation) t.validated.insert(e.epoch);
  }
  return out;
}

// Writes `contents` at `path`, plainly: the logs are for looking at, and the
// directory they are written in is swapped in whole (see below).
Status write_plain_file(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return Status::io_error(path.string() + ": cannot write");
  return Status::ok_status();
}

std::string event_file_name(double wall_time, std::string host) {
  return tensorboard_event_file_name(wall_time, std::move(host));
}

}  // namespace

std::string tensorboard_config_dir(ConfigId id) { return fmt::format("config-{}", id); }

std::string tensorboard_event_file_name(double wall_time, std::string host) {
  // The host ends a file name: keep it to safe characters.
  for (char& c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
  return fmt::format("events.out.tfevents.{}.{}", static_cast<int64_t>(wall_time), host.empty() ? "localhost" : host);
}

namespace tensorboard_events {

std::string file_version(double wall_time) {
  Message ev;
  ev.float64(event::wall_time, wall_time).bytes(event::file_version, "brain.Event:2");
  return ev.data();
}

std::string scalar(double wall_time, int64_t step, const std::string& tag, float v) {
  Message value_msg;
  value_msg.bytes(summary::tag, tag).float32(summary::simple_value, v);
  Message summary_msg;
  summary_msg.message(summary::value, value_msg);
  Message ev;
  ev.float64(event::wall_time, wall_time).int64(event::step, step).message(event::summary, summary_msg);
  return ev.data();
}

std::string hparams_experiment(double wall_time, const RunView& run) {
  // Every key any config has, with the values it takes.
  std::map<std::string, std::vector<nlohmann::json>> values;
  for (const auto& c : run.ranked)
    if (c.params.is_object())
      for (const auto& [key, v] : c.params.items()) values[key].push_back(v);
  Message experiment;
  experiment.bytes(hparams::experiment_description, "cerebro model selection: one session per config")
      .float64(hparams::time_created_secs, wall_time);
  for (const auto& [key, vs] : values) {
    Message info;
    info.bytes(hparams::info_name, key);
    bool numbers = std::all_of(vs.begin(), vs.end(), [](const nlohmann::json& v) { return v.is_number(); });
    bool booleans = std::all_of(vs.begin(), vs.end(), [](const nlohmann::json& v) { return v.is_boolean(); });
    if (numbers) {
      double lo = vs.front().get<double>(), hi = lo;
      for (const auto& v : vs) {
        lo = std::min(lo, v.get<double>());
        hi = std::max(hi, v.get<double>());
      }
      Message interval;
      interval.float64(hparams::min_value, lo).float64(hparams::max_value, hi);
      info.varint(hparams::info_type, hparams::type_float64).message(hparams::domain_interval, interval);
    } else {
      // A domain the UI can filter by (without one its columns do not sort).
      std::set<std::string> seen;
      Message list;
      for (const auto& v : vs)
        if (seen.insert(v.dump()).second) list.message(value::list_values, param_value(v));
      info.varint(hparams::info_type, booleans ? hparams::type_bool : hparams::type_string)
          .message(hparams::domain_discrete, list);
    }
    experiment.message(hparams::hparam_infos, info);
  }
  std::vector<std::pair<std::string, int>> tags = {{"val_accuracy", hparams::dataset_validation},
                                                   {"val_loss", hparams::dataset_validation},
                                                   {"train_loss", hparams::dataset_training}};
  // The task's (or a template's) other metrics, as the configs' epochs name them: val_r2 ...
  std::set<std::string> named;
  for (const auto& c : run.ranked)
    for (const auto& e : c.epochs)
      for (const auto& [tag, value] : named_values(e))
        if (quantity_of_name(tag) != Quantity::accuracy) named.insert(tag);
  for (const auto& tag : named) tags.emplace_back(tag, hparams::dataset_validation);
  for (const auto& [tag, dataset] : tags) {
    Message name;
    name.bytes(hparams::name_tag, tag);
    Message metric;
    metric.message(hparams::metric_name, name).varint(hparams::metric_dataset_type, dataset);
    experiment.message(hparams::metric_infos, metric);
  }
  experiment.bytes(hparams::experiment_name, run.experiment);
  return hparams_event(wall_time, kExperimentTag, hparams::experiment, experiment);
}

std::string session_start(double wall_time, const Standing& config) {
  Message start;
  if (config.params.is_object())
    for (const auto& [key, v] : config.params.items()) {
      Message entry;
      entry.bytes(1, key).message(2, param_value(v));
      start.message(hparams::start_hparams, entry);
    }
  start.bytes(hparams::start_group_name, config_run_name(config.id)).float64(hparams::start_time_secs, wall_time);
  return hparams_event(wall_time, kSessionStartTag, hparams::session_start_info, start);
}

std::string session_end(double wall_time, const Standing& config) {
  Message end;
  end.varint(hparams::end_status, session_status(config.status)).float64(hparams::end_time_secs, wall_time);
  return hparams_event(wall_time, kSessionEndTag, hparams::session_end_info, end);
}

std::vector<std::string> epoch_scalars(double at, const EpochMetrics& e, bool validated) {
  std::vector<std::string> events;
  events.push_back(scalar(at, e.epoch, "train_loss", static_cast<float>(e.train_loss)));
  // An epoch still without its validating unit has no validation metrics yet.
  if (validated) {
    events.push_back(scalar(at, e.epoch, "val_loss", static_cast<float>(e.val_loss)));
    events.push_back(scalar(at, e.epoch, "val_accuracy", static_cast<float>(e.val_accuracy)));
    for (const auto& [tag, value] : named_values(e))
      if (quantity_of_name(tag) != Quantity::accuracy)
        events.push_back(scalar(at, e.epoch, tag, static_cast<float>(value)));
  }
  events.push_back(scalar(at, e.epoch, "epoch_seconds", static_cast<float>(e.seconds)));
  return events;
}

}  // namespace tensorboard_events

Result<std::vector<std::string>> write_tensorboard_logs(const std::string& run_dir, const RunView& run,
                                                        const TensorBoardClock& clock) {
  // Written into tensorboard.tmp/, which then replaces tensorboard/: a reader
  // never sees a half-written set, and no file needs an fsync of its own (a
  // search of a thousand configs would wait seconds for them). After a power
  // loss `cerebro report RUN_DIR --tensorboard` writes them again.
  const fs::path root = fs::path(run_dir) / "tensorboard";
  const fs::path staging = fs::path(run_dir) / "tensorboard.tmp";
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (ec) return Status::io_error(fmt::format("{}: cannot clear: {}", staging.string(), ec.message()));
  const double start = clock.start_unix_s;
  std::vector<std::string> written;
  auto write = [&](const fs::path& sub, double first_time, const std::vector<std::string>& events) -> Status {
    fs::create_directories(staging / sub, ec);
    if (ec) return Status::io_error(fmt::format("{}: cannot create: {}", (staging / sub).string(), ec.message()));
    std::string file = tfrecord_frame(tensorboard_events::file_version(first_time));
    for (const auto& e : events) file += tfrecord_frame(e);
    auto name = event_file_name(first_time, clock.host);
    if (auto st = write_plain_file(staging / sub / name, file); !st.ok()) return st;
    written.push_back((root / sub / name).lexically_normal().string());
    return Status::ok_status();
  };
  auto fail = [&](const Status& st) {
    fs::remove_all(staging, ec);
    return st;
  };
  if (auto st = write(".", start, {tensorboard_events::hparams_experiment(start, run)}); !st.ok()) return fail(st);
  auto times = config_times(run.log);
  for (const auto& c : run.ranked) {
    const auto& t = times[c.id];
    std::vector<std::string> events{tensorboard_events::session_start(start + t.first_s, c)};
    for (const auto& e : c.epochs) {
      auto end = t.epoch_end_s.find(e.epoch);
      double at = start + (end == t.epoch_end_s.end() ? t.last_s : end->second);
      for (auto& scalar : tensorboard_events::epoch_scalars(at, e, t.validated.count(e.epoch) > 0))
        events.push_back(std::move(scalar));
    }
    if (c.status != ConfigStatus::running) events.push_back(tensorboard_events::session_end(start + t.last_s, c));
    if (auto st = write(config_run_name(c.id), start + t.first_s, events); !st.ok()) return fail(st);
  }
  fs::remove_all(root, ec);
  if (ec) return fail(Status::io_error(fmt::format("{}: cannot replace: {}", root.string(), ec.message())));
  fs::rename(staging, root, ec);
  if (ec)
    return fail(
        Status::io_error(fmt::format("{}: cannot rename to {}: {}", staging.string(), root.string(), ec.message())));
  return written;
}

}  // namespace cerebro
