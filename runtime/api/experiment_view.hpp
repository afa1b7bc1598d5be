#pragma once
// The JSON views of one experiment the HTTP API answers, built from its state
// store (so a running and a finished experiment look the same):
//
//   experiment_view  {"metric", "paused", "spec", "units_done", "configs": [{"config", "params",
//                     "status", "error", "metric", "rank", "epochs": [{"epoch", "train_loss",
//                     "val_loss", "val_accuracy", "seconds"}]}], "best": {"config", "metric",
//                     "params"} or null, ...one key per extra section}
//   units_view       {"units": [{"seq", "config", "partition", "epoch", "worker", "start_s",
//                     "end_s", "train_s", "validate_s", "restore_s", "save_s", "state_bytes",
//                     "status", "validated", "rolled_back"}], "since", "count"}
//
// The experiment view is assembled from sections, one function each: a
// feature that has more to show (a search procedure's proposals, a Pareto
// front) adds a row to experiment_view_sections() in experiment_view.cpp and
// its key appears in the API and to the dashboard.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/store/state_store.hpp"

namespace cerebro::api {

// What a section sees: the store (read only) and what the runner knows
// beyond it.
struct ExperimentFacts {
  const StateStore& store;
  bool paused = false;
  // The unit log, taken once however many sections read it, and shared
  // with the store rather than copied (a poll of a large run reads all of it).
  const std::vector<UnitLogEntry>& log() const {
    if (!log_cache) log_cache = store.unit_log_shared();
    return *log_cache;
  }
  mutable std::shared_ptr<const std::vector<UnitLogEntry>> log_cache = nullptr;
};

struct ViewSection {
  std::string name;  // for tests and docs
  // Adds its keys to the view.
  std::function<void(const ExperimentFacts&, nlohmann::json& view)> fill;
};

const std::vector<ViewSection>& experiment_view_sections();

nlohmann::json experiment_view(const ExperimentFacts& facts);

// The units after the first `since` of the log (all for 0), with "since" and
// "count", the log's length: a poller asks for ?since=<count> next time. A
// count below what the poller has means the log was rolled back (a damaged
// state): it asks for everything again.
nlohmann::json units_view(const std::vector<UnitLogEntry>& log, int64_t since = 0);

// Per-epoch metrics of validated epochs only (the epoch in progress is left
// out), as the REPL's show lists them.
nlohmann::json validated_epochs_json(const std::vector<UnitLogEntry>& log, ConfigId config);

// A config's parameters as its spec named them: a TorchScript model file (a value ending in ".pt")
// inside the spec's folder `spec_dir` is shown relative to it, so a template a submission brought is
// "net.pt" and not the server's upload path. params_on_server undoes it for the parameters of a
// config added or cloned by hand (a relative model file is the spec folder's).
nlohmann::json params_as_submitted(const nlohmann::json& params, const std::string& spec_dir);
nlohmann::json params_on_server(const nlohmann::json& params, const std::string& spec_dir);
// The spec's folder a run keeps (its meta "spec_dir"); "" when it has none.
std::string stored_spec_dir(const StateStore& store);

}  // namespace cerebro::api
