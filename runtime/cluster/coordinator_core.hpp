#pragma once
// The coordinator's decisions, without its actor (actors/coordinator.cpp is
// the shell): its agents (runtime/cluster/agent_registry.hpp) and its
// experiments (runtime/cluster/experiment_table.hpp), and what each event
// means for both. Every call returns what the shell must do, as values:
// which followers hear of an agent that joined or is lost, which runs start
// or resume. Time is passed in.
//
//   - An agent that joins counts for every running experiment; the
//     followed ones hear of it.
//   - An agent an experiment counts on is lost to it once: when it is silent
//     for longer than the experiment's own heartbeat timeout, or when it
//     leaves the cluster (dropped after the coordinator's timeout, or its
//     connection closed), whichever comes first.
//   - A submission of the spec of an unfinished experiment follows that one;
//     otherwise it needs an agent, and starts a new experiment.
//   - Experiments waiting to resume (found unfinished at start-up) resume
//     once agents have joined and none has joined for kRejoinGrace.
//
// Not thread safe: one owner (the coordinator actor's state).

#include <optional>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/cluster/agent_registry.hpp"
#include "runtime/cluster/experiment_table.hpp"

namespace cerebro {

struct CoordinatorSettings {
  std::string token;
  std::string state_dir;  // experiments/<id>/ run directories
  std::string listen;     // for the status
  // An agent silent for this long is dropped from the cluster.
  double heartbeat_timeout_s = 10;
};

// Tell the follower of `experiment` that agent `agent` is lost.
struct LostNotice {
  std::string experiment;
  AgentId agent = 0;
  std::string agent_name;
};

// Start the runner of `experiment` (a new one, or resume an unfinished one).
struct RunStart {
  std::string experiment;
  std::string run_dir;
  bool resume = false;
};

class CoordinatorCore {
 public:
  using TimePoint = AgentLiveness::TimePoint;
  using Duration = AgentLiveness::Duration;
  // How long the cluster must have been without a new join before waiting
  // experiments resume: agents rejoining a restarted coordinator come in
  // within a few seconds of each other, and a run placed on all of them
  // spreads its partitions better.
  static constexpr Duration kRejoinGrace{3.0};

  explicit CoordinatorCore(CoordinatorSettings settings);

  const CoordinatorSettings& settings() const { return settings_; }
  const AgentRegistry& agents() const { return agents_; }
  const ExperimentTable& experiments() const { return experiments_; }

  // invalid_argument "wrong token" unless the presented token is the cluster's.
  Status check_token(const std::string& presented) const;

  // --- agents -------------------------------------------------------------
  struct Joined {
    JoinDecision decision;
    std::vector<std::string> tell_followers;  // experiments whose follower hears of the new agent
  };
  Joined join(const JoinAttempt& attempt, TimePoint now);
  bool heartbeat(AgentId id, bool from_its_node, TimePoint now);
  struct Departure {
    AgentInfo agent;
    std::vector<LostNotice> tell;
  };
  // The agent's connection closed; nullopt for an agent not (any more) here.
  std::optional<Departure> leave(AgentId id);

  // Once a second.
  struct TickDecisions {
    std::vector<LostNotice> lost;                 // agents lost to running experiments
    std::vector<AgentRegistry::Dropped> dropped;  // agents dropped from the cluster
    std::vector<RunStart> resume;                 // waiting experiments that resume now (already running)
  };
  TickDecisions tick(TimePoint now);

  // --- experiments --------------------------------------------------------
  struct Submission {
    std::string experiment;
    std::optional<RunStart> start;  // none: the submitter follows the unfinished twin
  };
  // Errors: unavailable "no agent has joined the cluster yet".
  Result<Submission> submit(ExperimentFacts facts, const std::string& stamp);
  void add_finished(const std::string& id, ExperimentFacts facts, const std::string& run_dir, int64_t units) {
    experiments_.add_finished(id, std::move(facts), run_dir, units);
  }
  void add_waiting(const std::string& id, ExperimentFacts facts, const std::string& run_dir) {
    experiments_.add_waiting(id, std::move(facts), run_dir);
  }
  bool progressed(const std::string& id, const progress_update& p) { return experiments_.progressed(id, p); }
  bool followed(const std::string& id) { return experiments_.followed(id); }
  bool paused(const std::string& id, bool paused) { return experiments_.set_paused(id, paused); }
  bool ended(const std::string& id, bool completed, const std::string& error = "") {
    return experiments_.ended(id, completed, error);
  }

  // The cluster for `cerebro status` and the API: {"listen", "latest",
  // "agents": [...], "experiments": [...]}, as JSON text.
  std::string status_json(TimePoint now) const;

 private:
  RunStart start(const std::string& id, bool resume);
  std::vector<LostNotice> notices(const std::vector<std::string>& experiments, const AgentInfo& agent) const;
  std::vector<LostNotice> forget(AgentId id);

  CoordinatorSettings settings_;
  AgentRegistry agents_;
  ExperimentTable experiments_;
};

}  // namespace cerebro
