// AttachedCluster (actors/embedding.hpp): the embedding contract over a
// cerebro::Client of a remote coordinator.

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "actors/embedding.hpp"
#include "actors/embedding_submit.hpp"

namespace cerebro {

namespace fs = std::filesystem;

namespace {

// Refuses what cannot run attached, before any traffic.
Status check_attached_request(const ExperimentRequest& request) {
  const auto& builtin = datasets::builtin_dataset_sources();
  const auto& source = request.spec.data.source;
  if (std::find(builtin.begin(), builtin.end(), source) == builtin.end())
    return Status::invalid_argument(fmt::format(
        "data source '{}' is not built in: an attached cluster's coordinator prepares the data and cannot call a "
        "source registered in this process; use a built-in source (idx, csv) or a LocalCluster",
        source));
  std::error_code ec;
  if (fs::exists(request.run_dir, ec) && !fs::is_empty(request.run_dir, ec))
    return Status::failed_precondition(
        fmt::format("{}: the run directory already exists and is not empty", request.run_dir));
  return Status::ok_status();
}

Result<experiment_result> run_attached(caf::actor_system& system, const AttachedClusterOptions& options,
                                       const ExperimentRequest& request, const experiment_listener_actor& listener) {
  const auto& id = request.experiment_id;
  if (auto checked = check_attached_request(request); !checked.ok()) return checked.with_context(id);
  // A connection per run: a Client serves one thread at a time.
  auto client = Client::connect(system, options.coordinator, options.token, options.connect_timeout_s);
  if (!client.ok()) return client.status().with_context(id);
  auto tell = [&](const progress_update& p) {
    if (listener) caf::anon_send(listener, progress_atom::value, id, p);
  };
  auto files = (*client)->run(
      request.spec.source_text, request.spec.spec_dir, id,
      [&](const std::string& remote_id) {
        progress_update p;
        p.event = fmt::format("submitted to the coordinator at {} as experiment {}", (*client)->where(), remote_id);
        tell(p);
      },
      tell);
  if (!files.ok()) return files.status().with_context(id);
  if (!files->error.empty()) {
    // The run's own code, as the coordinator's runner had it.
    auto code = files->error_code == StatusCode::ok ? StatusCode::unknown : files->error_code;
    return Status::of(code, files->error).with_context(id);
  }
  if (auto written = write_run_files(*files, request.run_dir); !written.ok()) return written.with_context(id);
  auto summary = nlohmann::json::parse(std::ifstream(fs::path(request.run_dir) / "summary.json"), nullptr, false);
  if (summary.is_discarded() || !summary.is_object())
    return Status::corruption(fmt::format("{}: the coordinator sent no readable summary.json", id));
  return result_from_summary(id, request.run_dir, summary);
}

}  // namespace

AttachedCluster::AttachedCluster(caf::actor_system& system, AttachedClusterOptions options)
    : system_(system), options_(std::move(options)) {}

Result<std::unique_ptr<AttachedCluster>> AttachedCluster::connect(caf::actor_system& system,
                                                                  AttachedClusterOptions options) {
  auto client = Client::connect(system, options.coordinator, options.token, options.connect_timeout_s);
  if (!client.ok()) return client.status();
  // The token is checked only by a request: a wrong one fails here, not at
  // the first submission.
  auto status = (*client)->status();
  if (!status.ok())
    return Status::of(status.code(), fmt::format("the coordinator at {} refused the connection: {}", (*client)->where(),
                                                 status.error()));
  return std::unique_ptr<AttachedCluster>(new AttachedCluster(system, std::move(options)));
}

std::string AttachedCluster::where() const {
  return fmt::format("{}:{}", options_.coordinator.host, options_.coordinator.port);
}

Result<experiment_result> AttachedCluster::run(const ExperimentRequest& request,
                                               const experiment_listener_actor& listener) {
  return run_attached(system_, options_, request, listener);
}

void AttachedCluster::submit(ExperimentRequest request, experiment_listener_actor listener) {
  submit_detached(
      system_, std::move(request), std::move(listener),
      [options = options_](caf::actor_system& system, const ExperimentRequest& r, const experiment_listener_actor& l) {
        return run_attached(system, options, r, l);
      });
}

}  // namespace cerebro
