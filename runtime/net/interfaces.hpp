#pragma once
// The typed interfaces of the MOP runtime's actors: every message each one
// takes and what it answers, checked by the compiler at every send, request
// and behavior. The actors themselves are in actors/ (spawn functions in
// actors/actors.hpp).
//
// They live in the networking layer, not in actors/, because handles of the
// agent, its workers and the shard server cross the network inside cluster
// messages (join_request, shard_placement in runtime/net/cluster_messages.hpp).
// A handle received from another node is trusted to have the interface its
// type says: CAF cannot check a remote actor's interface.

#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/messages.hpp"
#include "runtime/base/rendezvous.hpp"
#include "runtime/net/atoms.hpp"
#include "runtime/net/pipeline_messages.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/spec/steering_command.hpp"
#include "runtime/store/experiment_result.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

namespace datasets {
struct Dataset;
}

// runtime/net/cluster_messages.hpp
struct shard_placement;
struct join_request;
struct join_reply;
struct submit_request;
struct dataset_request;
struct control_request;
struct control_reply;
struct run_files;
// runtime/net/gang_messages.hpp
struct gang_task;
struct gang_result;
struct gang_commit;
// runtime/net/pipeline_tasks.hpp
struct stage_host_task;
struct pipeline_task;

// A partition lent by a data-partition actor to a worker of the same process:
// a reference to the partition's memory, never a copy. Local only (peers on
// other nodes receive shards in chunks instead), hence not serializable.
struct partition_lease {
  PartitionId partition = 0;
  std::shared_ptr<const datasets::Dataset> data;
};

}  // namespace cerebro

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cerebro::partition_lease)

namespace cerebro {

// Owns one partition's tensors on a node and lends them.
using data_partition_actor = caf::typed_actor<caf::replies_to<borrow_atom>::with<partition_lease>>;

// The key-value board a data-parallel gang's ranks meet on,
// served by the scheduler's side: their Gloo addresses travel over the
// cluster's own channel, not through a TCPStore listening on every interface.
using rendezvous_actor = caf::typed_actor<caf::replies_to<rendezvous_atom, rendezvous_request>::with<rendezvous_reply>,
                                          // The gang's attempt ended: drop its keys.
                                          caf::reacts_to<rendezvous_atom, int64_t>>;

// Trains one unit at a time with LibTorch (detached: training blocks for
// seconds).
using worker_actor = caf::typed_actor<
    // Train the task's config on its partition from the task's state; the
    // answer has the new state and the unit's metrics and timings (status
    // failed, not an error, when training itself failed).
    caf::replies_to<train_atom, unit_task>::with<unit_result>,
    // Train the task's unit as one rank of a data-parallel gang:
    // blocks until the whole gang is done or has failed.
    caf::replies_to<gang_atom, gang_task>::with<gang_result>,
    // Host one stage of a pipeline attempt: the stage actor is
    // spawned in this worker's actor system (its node) and answered.
    caf::replies_to<stage_host_atom, stage_host_task>::with<pipeline_stage_actor>,
    // Drive a pipeline attempt's unit: stage 0 here, the others on the
    // task's hosts; one result, the framed pipeline state.
    caf::replies_to<pipeline_atom, pipeline_task>::with<unit_result>,
    // Drop the leases of that experiment's partitions.
    caf::reacts_to<release_atom, std::string>>;

// A node agent (one per machine): hosts the node's workers and data-partition
// actors and supervises the workers.
using agent_actor = caf::typed_actor<
    // (experiment, partition): a local worker borrows a partition.
    caf::replies_to<borrow_atom, std::string, PartitionId>::with<partition_lease>,
    // Hold that shard (from the local cache, a shared filesystem, or fetched
    // in bounded chunks from placement.source), verified against its
    // checksum; true once held.
    caf::replies_to<place_atom, shard_placement>::with<bool>,
    // Drop the experiment's partitions; the workers drop their leases.
    caf::reacts_to<release_atom, std::string>,
    // The workers it hosts (sent once, by spawn_agent).
    caf::reacts_to<std::vector<worker_actor>>,
    // Replace a dead worker (same index), named by its actor id: a handle
    // to a dead actor cannot be sent back to its own node (it arrives
    // empty). Answers the new worker.
    caf::replies_to<respawn_atom, caf::actor_id>::with<worker_actor>>;

// Serves one experiment's shard files to agents in bounded chunks:
// (experiment, file, offset, length) -> the bytes (at most max_chunk_bytes).
using shard_server_actor =
    caf::typed_actor<caf::replies_to<fetch_atom, std::string, std::string, int64_t, int64_t>::with<std::string>>;

// Persists completed units and answers for latest states (detached: commits
// are synced writes).
using checkpoint_actor = caf::typed_actor<
    // (result, seed, start_s, end_s): the unit's state and log entry made
    // durable; answers the entry as stored (with its seq and checksum).
    caf::replies_to<commit_atom, unit_result, uint64_t, double, double>::with<UnitLogEntry>,
    // A data-parallel gang's k units and its one state (rank 0's), in one
    // synced batch (StateStore::commit_gang); answers the entries as stored.
    caf::replies_to<commit_gang_atom, gang_commit>::with<std::vector<UnitLogEntry>>,
    // Sent by the actor to itself behind the commits already queued: they
    // are written in one synced batch, then each is answered (group commit).
    caf::reacts_to<flush_atom>,
    // The config's latest state (weights, buffers and optimizer state).
    caf::replies_to<latest_atom, ConfigId>::with<StateBytes>,
    // PBT's exploit: a config takes another's epoch-end state.
    caf::replies_to<copy_atom, state_copy>::with<bool>,
    // A search procedure's epoch-boundary decision, kept next to the unit log.
    caf::replies_to<decision_atom, SearchDecision>::with<bool>,
    // A person's steering action, kept with the decisions: the JSON record
    // made by runtime/spec/steering.hpp user_action() (its fields depend on
    // the action), as text.
    caf::replies_to<decision_atom, std::string>::with<bool>>;

// Whoever follows a scheduler (the experiment runner).
using scheduler_listener_actor = caf::typed_actor<
    // After each committed unit, config epoch and change of what runs where.
    caf::reacts_to<progress_atom, progress_update>,
    // Once, when the experiment ended (or cannot go on).
    caf::reacts_to<done_atom, experiment_done>,
    // (id, worker): the worker actor died on its own while its node is
    // reachable (its agent respawns it); not sent when the node is lost.
    caf::reacts_to<worker_lost_atom, WorkerId, worker_actor>>;

// Follows one running experiment for the coordinator (actors/run_follower):
// hears its scheduler as a listener, and the coordinator's news of agents
// that join or are lost, and answers steering requests.
using run_follower_actor = scheduler_listener_actor::extend<
    // (name, agent, its workers): an agent joined mid-run (or came back).
    caf::reacts_to<join_atom, std::string, agent_actor, std::vector<worker_actor>>,
    // The named agent is dead or stopped answering.
    caf::reacts_to<agent_lost_atom, std::string>,
    // Steering by a person, routed by the coordinator's gateway.
    caf::replies_to<control_atom, control_request>::with<control_reply>,
    // From train() (actors/run_follower.cpp), once: place the shards and
    // start the scheduler; true once it runs, the placement's error if not.
    caf::replies_to<start_atom>::with<bool>,
    // From train(): the run's outcome, answered once the scheduler is done
    // (the agents told to release the experiment's shards by then).
    caf::replies_to<done_atom>::with<experiment_done>>;

// Owns the experiment's unit queue (through ExperimentControl) and monitors
// its workers: a worker that dies has its unit requeued.
using scheduler_actor = caf::typed_actor<
    // Begin dispatching.
    caf::reacts_to<start_atom>,
    // (id, worker, partitions it holds): a worker joins mid-run.
    caf::reacts_to<add_worker_atom, WorkerId, worker_actor, std::vector<PartitionId>>,
    // The worker is lost (its agent is dead or stopped answering): its unit
    // goes back to the queue.
    caf::reacts_to<remove_worker_atom, WorkerId>,
    // (id, partitions): the worker now holds these.
    caf::reacts_to<holds_atom, WorkerId, std::vector<PartitionId>>,
    // Steering by a person: (command, config, params_json, epochs,
    // cloned_from, stages), see actors/experiment_steering.hpp; true once
    // applied. The command is pause, resume, stop or add (a clone is an add);
    // stages >= 2: the added config trains as a pipeline over that many.
    caf::replies_to<control_atom, SteeringCommand, ConfigId, std::string, int32_t, ConfigId, int32_t>::with<bool>>;

// The coordinator's gateway (actors/coordinator.hpp): every message it takes.
// It is published with this interface, and every peer (agent, client, bench)
// looks it up with it: CAF refuses a lookup whose interface differs from the
// published one. It lives here because its handle crosses the network in
// join_reply.
using coordinator_actor = caf::typed_actor<
    // From node agents: join (-> a handle and an id, or a refusal), then
    // heartbeats (-> whether the id is a live agent of this coordinator).
    caf::replies_to<join_atom, join_request>::with<join_reply>, caf::replies_to<heartbeat_atom, int32_t>::with<bool>,
    // From clients, each with the token: submit a spec (-> experiment id);
    // follow an experiment (token, experiment -> {"status", "metric"} JSON;
    // then progress and, at the end, run files arrive); the cluster's status
    // (-> JSON); steer or inspect an experiment; measure a model hop (token,
    // state bytes -> their size).
    caf::replies_to<submit_atom, submit_request>::with<std::string>,
    // The registered datasets (list, add, remove -> JSON).
    caf::replies_to<datasets_atom, dataset_request>::with<std::string>,
    caf::replies_to<attach_atom, std::string, std::string>::with<std::string>,
    caf::replies_to<status_atom, std::string>::with<std::string>,
    caf::replies_to<control_atom, control_request>::with<control_reply>,
    caf::replies_to<hop_atom, std::string, std::string>::with<int64_t>,
    // From itself, once a second: heartbeats checked, waiting experiments resumed.
    caf::reacts_to<tick_atom>,
    // From its experiments' runners (runtime/net/atoms.hpp).
    caf::reacts_to<run_line_atom, std::string, std::string>,
    caf::reacts_to<progress_atom, std::string, progress_update>,
    caf::reacts_to<run_started_atom, std::string, run_follower_actor>,
    caf::reacts_to<run_ended_atom, std::string, bool, run_files>>;

// What a client of the coordinator's gateway receives once it submitted or
// attached to an experiment (actors/client.hpp follows with a scoped actor).
// The gateway keeps these handles: a client is never asked anything.
using client_actor = caf::typed_actor<
    // The experiment's setup and run lines (only `event` set, units_total
    // 0), then its progress after each committed unit and config epoch.
    caf::reacts_to<progress_atom, progress_update>,
    // Once, when the experiment ended: its run files, or why it failed
    // (run_files::error).
    caf::reacts_to<files_atom, run_files>>;

// The coordinator's reader of experiments that do not run (ended, or waiting
// to resume; actors/finished_run_reader.hpp): answers their read-only
// commands from stores it opens once, in a thread of its own.
using finished_run_reader_actor = caf::typed_actor<
    // (request, run_dir, generation): a read-only command (detail, units,
    // top, show, configs, export) on the experiment's store; `generation`
    // is the experiment's, bumped at each change of state: an older open
    // store is not answered from.
    caf::replies_to<control_atom, control_request, std::string, uint64_t>::with<control_reply>,
    // The experiment changed state: close its store.
    caf::reacts_to<drop_store_atom, std::string>>;

// Looks up the coordinator's gateway for an agent (actors/agent_heartbeat.hpp):
// the middleman's lookup, retried until it answers (it blocks, so it runs
// in a thread of its own).
using gateway_finder_actor = caf::typed_actor<
    // The gateway, found (again).
    caf::replies_to<find_gateway_atom>::with<coordinator_actor>>;

// Keeps a node agent joined to its coordinator (actors/agent_heartbeat.hpp):
// joins, sends a heartbeat every interval, and rejoins when it lost the
// coordinator (connection closed, a heartbeat unanswered, or answered false).
using agent_heartbeat_actor = caf::typed_actor<
    // Look the gateway up (its gateway finder) and join it: at the start,
    // after a loss, and a moment after a join that got no answer.
    caf::reacts_to<find_gateway_atom>,
    // Join this gateway (found by the gateway finder, or the one it had).
    caf::reacts_to<join_atom, coordinator_actor>,
    // From itself every interval while joined: (round) one heartbeat, whose
    // answer it waits for; a round of an earlier membership is ignored.
    caf::reacts_to<heartbeat_atom, uint64_t>>;

// What a program embedding cerebro hears of an experiment it submitted
// (actors/embedding.hpp: LocalCluster, AttachedCluster).
using experiment_listener_actor = caf::typed_actor<
    // (experiment, progress): setup lines (only `event` set), then one
    // update per committed unit and config epoch.
    caf::reacts_to<progress_atom, std::string, progress_update>,
    // (experiment, result): once, when it finished or failed.
    caf::reacts_to<done_atom, std::string, experiment_result>>;

}  // namespace cerebro
