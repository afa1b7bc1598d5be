#pragma once
// The coordinator: one published gateway actor. Agents join through it (token
// checked in constant time, resources validated, names unique among live
// agents) and only then learn a handle; clients submit experiments and ask for
// status through it with the same token. Experiments run here, on the agents'
// workers, with their state under the coordinator's state directory.
//
// The coordinator alone owns its tables of agents and experiments. Each
// experiment runs in its own thread (a detached runner actor, see
// actors/experiment_runner.hpp), which reports to the coordinator by message
// (its lines, progress, the actor that follows the run, the end); the
// coordinator answers status and steering from what it was told.

#include <string>

#include <caf/all.hpp>

#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

struct coordinator_config {
  std::string token;
  std::string state_dir;  // experiments/<id>/ run directories
  std::string listen;     // for status output
  // An agent without a heartbeat for this long is dropped from the cluster
  // (it rejoins when it answers again); experiments give up on it after
  // their own [cluster] heartbeat_timeout.
  double heartbeat_timeout_s = 10;
};

// What an experiment's runner tells its coordinator (in this process only):
// (run_line_atom, experiment, line): a human line from the setup or the run;
using run_line_atom = caf::atom_constant<caf::atom("runline")>;
// (run_started_atom, experiment, follower): training started; the follower
// takes (join_atom, ...), (agent_lost_atom, name) and (control_atom, ...);
using run_started_atom = caf::atom_constant<caf::atom("runstarted")>;
// (run_ended_atom, experiment, completed, files): the run is over; `files`
// are what its clients receive (files.error says why when it failed).
using run_ended_atom = caf::atom_constant<caf::atom("runended")>;

// Every message the coordinator takes.
using coordinator_actor = caf::typed_actor<
    // From node agents: join (-> a handle and an id, or a refusal), then
    // heartbeats (-> whether the id is a live agent of this coordinator).
    caf::replies_to<join_atom, join_request>::with<join_reply>,
    caf::replies_to<heartbeat_atom, int32_t>::with<bool>,
    // From clients, each with the token: submit a spec (-> experiment id);
    // follow an experiment (token, experiment -> {"status", "metric"} JSON;
    // then progress and, at the end, run files arrive); the cluster's status
    // (-> JSON); steer or inspect an experiment; measure a model hop (token,
    // state bytes -> their size).
    caf::replies_to<submit_atom, submit_request>::with<std::string>,
    caf::replies_to<attach_atom, std::string, std::string>::with<std::string>,
    caf::replies_to<status_atom, std::string>::with<std::string>,
    caf::replies_to<control_atom, control_request>::with<control_reply>,
    caf::replies_to<hop_atom, std::string, std::string>::with<int64_t>,
    // From itself, once a second: heartbeats checked, waiting experiments resumed.
    caf::reacts_to<tick_atom>,
    // From its experiments' runners.
    caf::reacts_to<run_line_atom, std::string, std::string>,
    caf::reacts_to<progress_atom, std::string, progress_update>,
    caf::reacts_to<run_started_atom, std::string, caf::actor>,
    caf::reacts_to<run_ended_atom, std::string, bool, run_files>>;

coordinator_actor spawn_coordinator(caf::actor_system& system, coordinator_config config);

}  // namespace cerebro
