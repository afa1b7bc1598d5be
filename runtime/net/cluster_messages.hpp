#pragma once
// Messages between the coordinator, node agents and clients. Every field a
// peer sends is validated by the receiver (sizes, ranges, names) before use:
// see runtime/cluster_validation.hpp.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/spec/steering_command.hpp"
#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/cluster/peer_checks.hpp"
#include "runtime/net/atoms.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

// agent_resources (what a node agent brings) is plain: runtime/cluster/peer_checks.hpp.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, agent_resources& x) {
  return f(caf::meta::type_name("agent_resources"), x.name, x.workers, x.cores, x.memory_bytes, x.speed);
}

// An agent asks to join. `agent` is the agent's own actor; the coordinator
// sends it work only after the token check.
struct join_request {
  std::string token;
  agent_resources resources;
  agent_actor agent;
  std::vector<worker_actor> workers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, join_request& x) {
  return f(caf::meta::type_name("join_request"), x.token, x.resources, x.agent, x.workers);
}

// Refused joins carry a reason and no handle.
struct join_reply {
  bool accepted = false;
  std::string reason;
  int32_t agent_id = -1;
  coordinator_actor coordinator;  // for heartbeats; empty when refused
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, join_reply& x) {
  return f(caf::meta::type_name("join_reply"), x.accepted, x.reason, x.agent_id, x.coordinator);
}

// A shard an agent must hold for an experiment.
struct shard_placement {
  std::string experiment;
  PartitionId partition = 0;  // -1: the validation set
  std::string file;           // file name in the experiment's data directory
  int64_t bytes = 0;
  std::string checksum;       // "crc32:xxxxxxxx"
  std::string local_path;     // where the coordinator has it (agents on a shared filesystem read it there)
  shard_server_actor source;  // serves the file in chunks
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_placement& x) {
  return f(caf::meta::type_name("shard_placement"), x.experiment, x.partition, x.file, x.bytes, x.checksum,
           x.local_path, x.source);
}

// A client submits an experiment spec (TOML text and the directory its
// relative paths are relative to).
struct submit_request {
  std::string token;
  std::string spec_text;
  std::string spec_dir;
  std::string origin;  // file name for messages
  int32_t workers = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_request& x) {
  return f(caf::meta::type_name("submit_request"), x.token, x.spec_text, x.spec_dir, x.origin, x.workers);
}

// A client's request about the coordinator's registered datasets (docs/API.md "Datasets"): list them
// and the prepared-data cache; add one (its name, its [data] table as JSON and, for an upload, the
// folder under the coordinator's uploads its files were written to); or remove one by name.
enum class DatasetCommand : int32_t { list = 0, add = 1, remove = 2 };
struct dataset_request {
  std::string token;
  int32_t command = 0;  // a DatasetCommand
  std::string name;
  std::string data_json;
  std::string upload_dir;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dataset_request& x) {
  return f(caf::meta::type_name("dataset_request"), x.token, x.command, x.name, x.data_json, x.upload_dir);
}

// The files of a finished run a client receives (name -> bytes).
struct run_files {
  std::string experiment;
  std::string error;  // set when the run failed; then files is empty
  std::vector<std::string> names;
  std::vector<std::string> contents;
  StatusCode error_code = StatusCode::ok;  // the failure's code, with `error`
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_files& x) {
  return f(caf::meta::type_name("run_files"), x.experiment, x.error, x.names, x.contents, x.error_code);
}

// A client steers or inspects one experiment through the gateway (the REPL,
// actors/client.hpp). `command` (runtime/spec/steering_command.hpp) is one of:
// pause, resume, stop (config), add (settings), clone (config, settings), show
// (config), top (rows), export (config), configs; it travels as its enum's
// integer, and a value outside the enum is refused by the gateway. An empty
// `experiment` means the most recently submitted.
struct control_request {
  std::string token;
  std::string experiment;
  SteeringCommand command = SteeringCommand::show;
  ConfigId config = -1;
  std::vector<std::string> settings;  // "key=value" hyper-parameter overrides
  int32_t rows = 0;
  // units: only the units after the first `since` (the HTTP API's ?since=N).
  int64_t since = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, control_request& x) {
  return f(caf::meta::type_name("control_request"), x.token, x.experiment, x.command, x.config, x.settings, x.rows,
           x.since);
}

// The answer: `json` is the command's result (see actors/client.hpp for each
// command's fields); `file` carries an exported model's bytes.
struct control_reply {
  std::string experiment;  // the experiment the command applied to
  std::string json;
  std::string file;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, control_reply& x) {
  return f(caf::meta::type_name("control_reply"), x.experiment, x.json, x.file);
}

void register_cluster_message_types(caf::actor_system_config& config);

// The text a peer refused a request with (its message, whatever the error's
// category), else CAF's own description of the error. For the code too, use
// to_status (runtime/net/error_category.hpp).
std::string error_text(const caf::error& error);

}  // namespace cerebro
