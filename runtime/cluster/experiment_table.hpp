#pragma once
// The coordinator's experiments: one entry per experiment it knows (submitted
// here, or found unfinished in its state directory), with its status and the
// status's generation, its last progress, and the agents it counts on.
// Plain bookkeeping with time passed in; the actors around an experiment (its
// runner, the actor following it, the clients) stay in the coordinator actor,
// keyed by experiment id.
//
//   waiting   (found unfinished at start-up) --start()--> running
//   running   --ended()--> completed | failed
//
// Each change of status moves the generation on: the reader of ended runs
// never answers from a store opened before the change.
//
// Not thread safe: one owner (the coordinator actor's state).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/lifecycle.hpp"
#include "runtime/base/messages.hpp"
#include "runtime/base/status.hpp"
#include "runtime/cluster/agent_liveness.hpp"

namespace cerebro {

// What the coordinator keeps of an experiment's spec: from a submission's
// parsed spec, or from the store of an unfinished run.
struct ExperimentFacts {
  std::string name;
  std::string metric = "val_accuracy";
  std::string spec_text;            // the spec's source: a resubmission of the same text follows this experiment
  double heartbeat_timeout_s = 10;  // the spec's [cluster] heartbeat_timeout
};

struct ExperimentEntry {
  std::string id;
  ExperimentFacts facts;
  std::string run_dir;
  ExperimentStatus status = ExperimentStatus::waiting;
  std::string error;  // a failed run's reason
  uint64_t generation = 0;
  progress_update progress;  // the last one its runner reported
  // The agents of the run, against the spec's heartbeat timeout: one that
  // falls silent is reported lost to the run once.
  AgentLiveness liveness{AgentLiveness::Duration(10)};
  // Its runner reported the actor that follows the run (once training
  // started): only then does it hear of agents that join or are lost.
  bool followed = false;
  // As the last pause or resume through the gateway left it; a run that starts (again) is not paused.
  bool paused = false;

  bool unfinished() const { return status == ExperimentStatus::running || status == ExperimentStatus::waiting; }
  bool ended() const { return !unfinished(); }
};

// What an attach answers: {"status", "metric"} as JSON; for an ended
// experiment the client gets its run files at once (`files_error` is the run
// files' error for a failed one), otherwise it follows the run.
struct AttachAnswer {
  std::string json;
  bool ended = false;
  std::string run_dir;
  std::string files_error;
};

// An experiment named in a spec's warm_start (runtime/run/warm_start.hpp).
struct WarmStartRun {
  std::string run_dir;
  bool finished = false;  // its store is free to read (not the runner's)
};

class ExperimentTable {
 public:
  using TimePoint = AgentLiveness::TimePoint;

  explicit ExperimentTable(std::string state_dir) : state_dir_(std::move(state_dir)) {}

  // <state_dir>/experiments/<id>
  std::string run_dir_of(const std::string& id) const;

  // An unfinished run found in the state directory: waiting to resume.
  void add_waiting(const std::string& id, ExperimentFacts facts, const std::string& run_dir);
  // A finished run found there: completed with all its `units` done, its results readable (not run again).
  void add_finished(const std::string& id, ExperimentFacts facts, const std::string& run_dir, int64_t units);
  // The unfinished (running or waiting) experiment submitted with this very
  // spec text, if any: a resubmission follows it instead of starting a twin.
  const ExperimentEntry* unfinished_twin(const std::string& spec_text) const;
  // A new experiment, waiting to be started, and the latest one: its id is
  // <name>-<stamp>-<n> (the name cut to 32 characters, or "experiment" when
  // it is not a safe name; n counts this coordinator's submissions).
  const ExperimentEntry& add_new(ExperimentFacts facts, const std::string& stamp);

  // Starts (or resumes) the experiment: running, not yet followed, counting
  // on `agents` (each as last heard from). Unknown ids are a caller's bug.
  void start(const std::string& id, const std::vector<std::pair<AgentId, TimePoint>>& agents);

  // What its runner reports; false for an unknown id.
  bool progressed(const std::string& id, const progress_update& progress);
  bool followed(const std::string& id);
  bool set_paused(const std::string& id, bool paused);
  // The run ended: completed or failed, no longer followed.
  // `error`: why a failed run failed (its run's error), kept for the status.
  bool ended(const std::string& id, bool completed, const std::string& error = "");

  // Agents come and go. A running experiment counts on an agent that joins;
  // answers the experiments whose follower must hear of it.
  std::vector<std::string> agent_joined(AgentId agent, TimePoint now);
  void heartbeat(AgentId agent, TimePoint now);
  // The agent is gone (dropped or its connection closed): no experiment
  // counts on it any more; answers the followed running ones that counted
  // on it (their follower must hear it is lost).
  std::vector<std::string> agent_gone(AgentId agent);
  // The agents silent for longer than each followed running experiment's
  // timeout at `now`: (experiment, agent), each reported once.
  std::vector<std::pair<std::string, AgentId>> tick(TimePoint now);

  Result<AttachAnswer> attach(const std::string& id) const;
  std::optional<WarmStartRun> warm_start_run(const std::string& id) const;
  // The experiment `id`; for an empty id the latest submitted.
  const ExperimentEntry* find(const std::string& id) const;
  const std::map<std::string, ExperimentEntry>& entries() const { return entries_; }
  const std::string& latest() const { return latest_; }

 private:
  ExperimentEntry* entry(const std::string& id);
  void set_status(ExperimentEntry& entry, ExperimentStatus status);

  std::string state_dir_;
  std::map<std::string, ExperimentEntry> entries_;
  std::string latest_;  // for control requests that name none
  int next_number_ = 1;
};

}  // namespace cerebro
