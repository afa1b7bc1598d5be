#pragma once
// The atoms that name the messages between the runtime's actors and across
// the cluster: the typed actor interfaces (runtime/net/interfaces.hpp) and
// the message headers use them.
// CAF 0.17 atoms have at most 10 characters.

#include <caf/atom.hpp>

namespace cerebro {

// Training and checkpoints (runtime/net/interfaces.hpp says who takes which).
using train_atom = caf::atom_constant<caf::atom("train")>;
using commit_atom = caf::atom_constant<caf::atom("commit")>;
using latest_atom = caf::atom_constant<caf::atom("latest")>;
using borrow_atom = caf::atom_constant<caf::atom("borrow")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using copy_atom = caf::atom_constant<caf::atom("copy")>;
using decision_atom = caf::atom_constant<caf::atom("decision")>;
// The checkpoint actor to itself: commit the units received so far (group commit).
using flush_atom = caf::atom_constant<caf::atom("flush")>;

// The cluster: agents, the coordinator gateway, clients.
using join_atom = caf::atom_constant<caf::atom("join")>;
using place_atom = caf::atom_constant<caf::atom("place")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
// (datasets_atom, dataset_request) -> JSON: the coordinator's registered datasets.
using datasets_atom = caf::atom_constant<caf::atom("datasets")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using files_atom = caf::atom_constant<caf::atom("files")>;
using add_worker_atom = caf::atom_constant<caf::atom("addworker")>;
// Failure handling (see docs/RELIABILITY.md):
// (remove_worker_atom, WorkerId) to a scheduler: the worker is lost (its agent
// stopped answering); its unit goes back to the queue.
using remove_worker_atom = caf::atom_constant<caf::atom("rmworker")>;
// (holds_atom, WorkerId, partitions) to a scheduler: the worker now holds these.
using holds_atom = caf::atom_constant<caf::atom("holds")>;
// (worker_lost_atom, WorkerId, worker) from a scheduler to its listener: the
// worker actor died on its own while its node is reachable (its agent
// respawns it); not sent when the node itself is lost.
using worker_lost_atom = caf::atom_constant<caf::atom("wlost")>;
// (respawn_atom, old worker's actor id) -> new worker: an agent replaces a
// dead worker.
using respawn_atom = caf::atom_constant<caf::atom("respawn")>;
// (agent_lost_atom, name) to an experiment's follower: the agent is dead or hung.
using agent_lost_atom = caf::atom_constant<caf::atom("alost")>;
// (attach_atom, token, experiment) -> status: follow a running experiment.
using attach_atom = caf::atom_constant<caf::atom("attach")>;
// The coordinator's periodic check of agent heartbeats and pending resumes.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
// (hop_atom, token, bytes) -> int64 size: measures moving a model state.
using hop_atom = caf::atom_constant<caf::atom("hop")>;
// (control_atom, control_request) -> control_reply: gateway -> experiment
// runner; (control_atom, command, ...) -> bool: runner -> scheduler.
using control_atom = caf::atom_constant<caf::atom("control")>;

// What an experiment's runner tells its coordinator (in this process only,
// though they are part of the coordinator's interface, which peers hold):
// (run_line_atom, experiment, line): a human line from the setup or the run;
using run_line_atom = caf::atom_constant<caf::atom("runline")>;
// (run_started_atom, experiment, follower): training started; the follower
// takes (join_atom, ...), (agent_lost_atom, name) and (control_atom, ...);
using run_started_atom = caf::atom_constant<caf::atom("runstarted")>;
// (run_ended_atom, experiment, completed, files): the run is over; `files`
// are what its clients receive (files.error says why when it failed).
using run_ended_atom = caf::atom_constant<caf::atom("runended")>;

// Data-parallel gangs: (gang_atom, gang_task) -> gang_result to a
// member worker; (rendezvous_atom, request) -> reply to the gang's board,
// (rendezvous_atom, gang id) closes a gang's scope there; (commit_gang_atom,
// gang_commit) -> the entries to the checkpoint actor.
using gang_atom = caf::atom_constant<caf::atom("gang")>;
using rendezvous_atom = caf::atom_constant<caf::atom("rendezvous")>;
using commit_gang_atom = caf::atom_constant<caf::atom("commitgang")>;
// Pipeline attempts: (stage_host_atom, stage_host_task) ->
// pipeline_stage_actor to a stage's host worker; (pipeline_atom,
// pipeline_task) -> unit_result to the attempt's driver.
using stage_host_atom = caf::atom_constant<caf::atom("stagehost")>;
using pipeline_atom = caf::atom_constant<caf::atom("pipeline")>;

// (drop_store_atom, experiment) to the coordinator's reader of ended runs:
// close that experiment's store (it changed state).
using drop_store_atom = caf::atom_constant<caf::atom("dropstore")>;
// (find_gateway_atom) -> coordinator_actor to an agent's gateway finder: the
// coordinator's gateway, looked up again.
using find_gateway_atom = caf::atom_constant<caf::atom("findgw")>;

}  // namespace cerebro
