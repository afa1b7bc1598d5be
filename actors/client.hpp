#pragma once
// cerebro::Client: a typed client of a coordinator's gateway, the one way
// programs talk to a cluster (the REPL, `cerebro status`, `run --cluster`).
// The gateway is remote (connect()) or in this process (an EmbeddedCluster's
// gateway): the same messages either way.
//
// Every call blocks the calling thread until the gateway answers (or a
// timeout) and returns a Result: an error names what went wrong, e.g. the
// gateway's refusal ("config 9 has already ended (stopped)"). After a call
// failed because the gateway became unreachable, lost_connection() is true
// and reconnect() attaches again (remote gateways).
//
// Experiments are named by id; an empty id means the most recently submitted
// experiment of the coordinator. Config ids are per experiment. A command on
// an experiment that is still preparing its data, or finishing its run,
// waits (up to setup_wait_s) for the answer that holds after that.
//
// Not thread-safe: one thread per Client. Destroy it before its actor system.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

struct GatewayAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;
  bool tls = false;  // the actor system must be configured for TLS (actors/system_config.hpp)
};

// Looks up the gateway actor published at `address`, retrying with capped
// exponential back-off for up to `budget_s` seconds (< 0: forever);
// `retrying` hears why each failed attempt failed. The gateway must be
// published with the coordinator's interface (runtime/net/interfaces.hpp):
// CAF refuses an actor published with another one.
caf::expected<coordinator_actor> find_gateway(caf::actor_system& system, const GatewayAddress& address, double budget_s,
                                              const std::function<void(const std::string&)>& retrying = {});

// Writes the files of a finished run (Client::run, Client::attach) into
// `dir`, creating it; names that are not plain file names are skipped.
Status write_run_files(const run_files& files, const std::string& dir);

class Client {
 public:
  // Attaches to a remote gateway, retrying with back-off for up to
  // `timeout_s` seconds. The system must have the middleman loaded.
  static Result<std::unique_ptr<Client>> connect(caf::actor_system& system, const GatewayAddress& address,
                                                 std::string token, double timeout_s);
  // A gateway in this process.
  Client(caf::actor_system& system, coordinator_actor gateway, std::string token);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // "host:port", or "embedded" for an in-process gateway.
  std::string where() const;
  // The last call failed because the gateway is out of reach.
  bool lost_connection() const { return lost_; }
  // Attaches to the remote gateway again (an error for an in-process one).
  Status reconnect(double timeout_s);

  // The cluster: {"listen", "latest" (experiment id or ""), "agents": [{"name",
  // "node", "workers", "cores", "memory_bytes", "speed", "state", ...}],
  // "experiments": [{"id", "name", "status", "units_done", "units_total", "elapsed_s"}]}.
  Result<nlohmann::json> status();

  // Submits an experiment spec (TOML text; relative paths are relative to
  // spec_dir; origin names it in messages) and returns its id at once.
  Result<std::string> submit(const std::string& spec_text, const std::string& spec_dir, const std::string& origin);

  using Progress = std::function<void(const progress_update&)>;

  // Submits and follows the run to its end: `submitted` gets the id, then
  // `progress` every update; returns the run's files (run_files.error set if
  // the run failed). A lost coordinator (restarted, or the network) does not
  // end it: the client reconnects and attaches again for up to
  // reconnect_timeout_s, telling `progress` (events with units_total 0).
  Result<run_files> run(const std::string& spec_text, const std::string& spec_dir, const std::string& origin,
                        const std::function<void(const std::string&)>& submitted, const Progress& progress);

  // Follows an experiment already on the coordinator (running, waiting to
  // resume after a restart, or finished) like run(): `attached` gets its
  // {"status", "metric"} first.
  Result<run_files> attach(const std::string& experiment, const std::function<void(const nlohmann::json&)>& attached,
                           const Progress& progress);

  // Blocks until the experiment is no longer running, calling `changed` with
  // its status entry (see status()) whenever its units_done or its Pareto
  // front (several objectives) changes.
  // Returns its final entry.
  Result<nlohmann::json> wait(const std::string& experiment,
                              const std::function<void(const nlohmann::json&)>& changed = {});

  // Steering (actors/experiment_steering.hpp lists each answer's fields; every
  // answer also carries "experiment", the id it applied to).
  Result<nlohmann::json> pause(const std::string& experiment);
  // The coordinator's registered datasets (actors/coordinator_datasets.hpp): list them with the
  // prepared-data cache; register one by its [data] table (`upload_dir`: the folder its uploaded files
  // were written to, "" for paths on the cluster); remove one.
  Result<nlohmann::json> datasets();
  Result<nlohmann::json> add_dataset(const std::string& name, const nlohmann::json& data,
                                     const std::string& upload_dir = "");
  Result<nlohmann::json> remove_dataset(const std::string& name);
  Result<nlohmann::json> resume(const std::string& experiment);
  Result<nlohmann::json> stop(const std::string& experiment, ConfigId config);
  // A new config: the experiment's first config's parameters with `settings`
  // ("key=value") applied, joining at its first epoch.
  Result<nlohmann::json> add(const std::string& experiment, const std::vector<std::string>& settings);
  // A new config starting from `config`'s latest state (weights and optimizer
  // state) with `settings` applied to its parameters.
  Result<nlohmann::json> clone(const std::string& experiment, ConfigId config,
                               const std::vector<std::string>& settings);

  // Inspection (also of finished experiments).
  Result<nlohmann::json> show(const std::string& experiment, ConfigId config);
  Result<nlohmann::json> top(const std::string& experiment, int32_t rows);
  Result<nlohmann::json> configs(const std::string& experiment);
  // The HTTP API's views (runtime/api/experiment_view.hpp): the whole
  // experiment (configs, per-epoch metrics, best, spec) and its unit log
  // (the units after the first `since`, with the log's count).
  Result<nlohmann::json> detail(const std::string& experiment);
  Result<nlohmann::json> units(const std::string& experiment, int64_t since = 0);
  // Writes `config`'s latest model to `path` as TorchScript (torch::jit::load).
  Result<nlohmann::json> export_model(const std::string& experiment, ConfigId config, const std::string& path);
  // The same file's bytes.
  Result<std::string> model_file(const std::string& experiment, ConfigId config);
  // One of the run's files by name (runtime/api/api_route.hpp RunFile: summary.json, metrics.csv,
  // best_model.pt once the run has ended; report.html drawn at once).
  Result<std::string> run_file(const std::string& experiment, const std::string& name);

  double request_timeout_s = 30;
  double reconnect_timeout_s = 120;
  double setup_wait_s = 120;

 private:
  Result<std::string> submit_as(caf::scoped_actor& self, const std::string& spec_text, const std::string& spec_dir,
                                const std::string& origin);
  // `self` asks to follow `experiment`: its progress and files go to `self`.
  Result<nlohmann::json> attach_as(caf::scoped_actor& self, const std::string& experiment, double timeout_s);
  // Receives progress and the run files at `self` (which submitted or
  // attached), reconnecting and attaching again when the gateway is lost.
  Result<run_files> follow(caf::scoped_actor& self, const std::string& experiment, const Progress& progress);
  Result<control_reply> control(control_request request, double timeout_s);
  // The export command's answer: the config's TorchScript file and its JSON.
  Result<control_reply> exported(const std::string& experiment, ConfigId config);
  Result<nlohmann::json> control_json(control_request request);
  Result<nlohmann::json> dataset_json(dataset_request request);
  Status failed(const caf::error& error);

  caf::actor_system& system_;
  coordinator_actor gateway_;
  std::string token_;
  GatewayAddress address_;
  bool remote_ = false;
  bool lost_ = false;
};

}  // namespace cerebro
