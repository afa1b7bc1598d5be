#include "runtime/viz/tensorboard_live.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/viz/tfrecord.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

// Appends `bytes` to `path` (created if missing) with one write(2) where the
// kernel takes it whole, so a reader sees whole records.
Status append_bytes(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::io_error(fmt::format("{}: cannot open to append: {}", path, std::strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto message = fmt::format("{}: cannot append: {}", path, std::strerror(errno));
      ::close(fd);
      return Status::io_error(message);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Status::io_error(fmt::format("{}: cannot close: {}", path, std::strerror(errno)));
  return Status::ok_status();
}

}  // namespace

LiveTensorBoard::LiveTensorBoard(std::string root, TensorBoardClock clock)
    : root_(std::move(root)), clock_(std::move(clock)) {}

Result<std::unique_ptr<LiveTensorBoard>> LiveTensorBoard::start(const std::string& run_dir, TensorBoardClock clock) {
  const fs::path root = fs::path(run_dir) / "tensorboard";
  std::error_code ec;
  fs::remove_all(root, ec);
  if (!ec) fs::remove_all(fs::path(run_dir) / "tensorboard.tmp", ec);
  if (!ec) fs::create_directories(root, ec);
  if (ec)
    return Status::io_error(fmt::format("{}: cannot prepare the TensorBoard logs: {}", root.string(), ec.message()));
  return std::unique_ptr<LiveTensorBoard>(new LiveTensorBoard(root.string(), std::move(clock)));
}

Status LiveTensorBoard::fail(Status status) {
  failed_ = true;
  return status;
}

Status LiveTensorBoard::append(const std::string& file, const std::vector<std::string>& events) {
  std::string bytes;
  for (const auto& e : events) bytes += tfrecord_frame(e);
  if (bytes.empty()) return Status::ok_status();
  auto appended = append_bytes(file, bytes);
  return appended.ok() ? appended : fail(appended);
}

Result<LiveTensorBoard::ConfigLog*> LiveTensorBoard::config_log(ConfigId id, const nlohmann::json& params,
                                                                double first_start_s) {
  auto& c = configs_[id];
  if (!c.file.empty()) return &c;
  const fs::path dir = fs::path(root_) / tensorboard_config_dir(id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(Status::io_error(fmt::format("{}: cannot create: {}", dir.string(), ec.message())));
  const double first = clock_.start_unix_s + first_start_s;
  c.file = (dir / tensorboard_event_file_name(first, clock_.host)).string();
  Standing standing;
  standing.id = id;
  standing.params = params;
  auto started =
      append(c.file, {tensorboard_events::file_version(first), tensorboard_events::session_start(first, standing)});
  if (!started.ok()) return started;
  return &c;
}

Status LiveTensorBoard::update(const StateStore& store) {
  if (failed_) return Status::ok_status();
  auto units = store.unit_log_after(last_seq_);
  if (units.empty()) return Status::ok_status();
  bool unknown =
      std::any_of(units.begin(), units.end(), [&](const UnitLogEntry& e) { return !params_.count(e.config); });
  if (unknown)
    for (const auto& c : store.configs()) params_[c.id] = c.params;
  return add(units, params_);
}

Status LiveTensorBoard::add(const std::vector<UnitLogEntry>& units, const std::map<ConfigId, nlohmann::json>& params) {
  if (failed_) return Status::ok_status();
  // The epochs this batch validates, written once all of the batch is in (a
  // gang commits an epoch's units together).
  std::set<std::pair<ConfigId, int32_t>> validated;
  for (const auto& e : units) {
    if (e.seq <= last_seq_ || e.rolled_back) continue;
    last_seq_ = e.seq;
    auto found = params.find(e.config);
    auto log = config_log(e.config, found == params.end() ? nlohmann::json::object() : found->second, e.start_s);
    if (!log.ok()) return log.status();
    auto& c = **log;
    c.units.push_back(e);
    c.last_end_s = std::max(c.last_end_s, e.end_s);
    // A committed validation ends the config's epoch: its units are all in (a config trains in one place at a time).
    if (e.has_validation && !c.written.count(e.epoch)) validated.insert({e.config, e.epoch});
  }
  // Per config, one append of every record this batch adds.
  std::map<ConfigId, std::vector<std::string>> batches;
  for (const auto& [config, epoch] : validated) {
    auto& c = configs_[config];
    double end_s = 0;
    for (const auto& u : c.units)
      if (u.epoch == epoch) end_s = std::max(end_s, u.end_s);
    for (const auto& m : epoch_metrics(c.units, config)) {
      if (m.epoch != epoch) continue;
      for (auto& event : tensorboard_events::epoch_scalars(clock_.start_unix_s + end_s, m, true))
        batches[config].push_back(std::move(event));
      c.written.insert(epoch);
    }
  }
  for (const auto& [config, events] : batches)
    if (auto st = append(configs_[config].file, events); !st.ok()) return st;
  return Status::ok_status();
}

Result<std::vector<std::string>> LiveTensorBoard::finish(const RunView& run) {
  if (failed_) return Status::io_error("the live TensorBoard logs failed earlier");
  std::map<ConfigId, nlohmann::json> params;
  for (const auto& c : run.ranked) params[c.id] = c.params;
  if (auto st = add(run.log, params); !st.ok()) return st;
  std::vector<std::string> files;
  const double start = clock_.start_unix_s;
  for (const auto& c : run.ranked) {
    // A config that never trained (its pilot check failed) still gets its session.
    auto log = config_log(c.id, c.params, 0);
    if (!log.ok()) return log.status();
    auto& cl = **log;
    std::set<int32_t> validated;
    for (const auto& e : cl.units)
      if (e.has_validation) validated.insert(e.epoch);
    std::map<int32_t, double> epoch_end_s;
    for (const auto& e : cl.units) epoch_end_s[e.epoch] = std::max(epoch_end_s[e.epoch], e.end_s);
    std::vector<std::string> events;
    for (const auto& e : c.epochs) {
      if (cl.written.count(e.epoch)) continue;
      auto end = epoch_end_s.find(e.epoch);
      double at = start + (end == epoch_end_s.end() ? cl.last_end_s : end->second);
      for (auto& event : tensorboard_events::epoch_scalars(at, e, validated.count(e.epoch) > 0))
        events.push_back(std::move(event));
      cl.written.insert(e.epoch);
    }
    if (c.status != ConfigStatus::running) events.push_back(tensorboard_events::session_end(start + cl.last_end_s, c));
    if (auto st = append(cl.file, events); !st.ok()) return st;
    files.push_back(fs::path(cl.file).lexically_normal().string());
  }
  // The experiment's record, whole, in a file of its own (renamed into place).
  const auto name = tensorboard_event_file_name(start, clock_.host);
  const fs::path path = fs::path(root_) / name;
  const fs::path partial = fs::path(root_) / ("." + name + ".partial");
  std::error_code ec;
  fs::remove(partial, ec);
  auto written = append_bytes(partial.string(), tfrecord_frame(tensorboard_events::file_version(start)) +
                                                    tfrecord_frame(tensorboard_events::hparams_experiment(start, run)));
  if (written.ok()) fs::rename(partial, path, ec);
  if (!written.ok() || ec) {
    auto problem = written.ok() ? Status::io_error(fmt::format("{}: cannot rename to {}: {}", partial.string(),
                                                               path.string(), ec.message()))
                                : written;
    fs::remove(partial, ec);  // a run file never has a hidden name (runtime/net/cluster_validation)
    return fail(problem);
  }
  files.insert(files.begin(), path.lexically_normal().string());
  return files;
}

}  // namespace cerebro
