#pragma once
// A discrete-event simulation of a cluster driving ExperimentControl with a
// search procedure, as the scheduler actor does, plus a fake checkpoint shell:
// every config's "model state" is a hash of everything it trained on (with
// which hyper-parameters) and a skill that grows with training, from which its
// validation accuracy is derived. The shell executes ExperimentControl's
// StateCopy actions after a delay and checks that they are exact: the source
// state exists at the named epoch end, the target is not dispatched while the
// copy is pending, and its next unit starts from the copied state with the
// new hyper-parameters.

#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/scheduling/unit_log_check.hpp"

namespace cerebro::test {

struct SimCluster {
  int32_t workers = 3;
  int32_t partitions = 3;
  bool embedded = true;         // every worker holds every partition; else random holdings
  double unit_failure_p = 0;    // per attempt
  double diverge_p = 0;         // per unit
  int32_t worker_removals = 0;  // each worker comes back after a while
  double copy_delay = 0.5;      // how long the shell takes to copy a state
  int max_unit_retries = 3;
};

// A config's fake model state.
struct FakeState {
  uint64_t hash = 0;
  double skill = 0;
  bool operator==(const FakeState& o) const { return hash == o.hash && skill == o.skill; }
  bool operator!=(const FakeState& o) const { return !(*this == o); }
};

class SearchSimulation {
 public:
  // `epochs`: every config's planned epochs. `policy` null: randomized.
  SearchSimulation(SimCluster cluster, std::vector<ConfigParams> configs, int32_t epochs,
                   std::unique_ptr<SearchProcedure> procedure, uint64_t seed,
                   std::unique_ptr<SchedulingPolicy> policy = nullptr);

  // Runs until no event is left; true if every config ended.
  bool run();

  // The MOP invariants on the simulated unit log, units_done == units_total ==
  // committed units, and the shell's own checks (problems()).
  Status check() const;
  const std::vector<std::string>& problems() const { return problems_; }

  const ExperimentControl& control() const { return control_; }
  const std::vector<SearchDecision>& decisions() const { return decisions_; }
  const std::vector<StateCopy>& copies() const { return copies_; }
  // Epochs each config completed (its validating unit committed).
  int32_t epochs_completed(ConfigId c) const;
  const ReplayPolicy::VisitOrder& visit_order() const { return visit_order_; }
  const nlohmann::json& params(ConfigId c) const { return params_.at(c); }
  const FakeState& epoch_end_state(ConfigId c, int32_t epoch) const { return epoch_end_.at(c).at(epoch); }
  // The validation accuracy the fake model reports after config c's epoch e.
  double accuracy(ConfigId c, int32_t epoch) const { return accuracy_.at({c, epoch}); }

 private:
  struct Event {
    enum Kind { unit_end, copy_done, worker_leaves, worker_returns };
    double time;
    Kind kind;
    WorkerId worker;
    int64_t attempt;
    ConfigId config;
    int64_t seq;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  struct Attempt {
    int64_t id;
    Dispatch dispatch;
    double start_s;
    bool fails;
    bool diverges;
    FakeState start_state;
    nlohmann::json params;
  };

  void push(Event::Kind kind, double time, WorkerId worker, int64_t attempt, ConfigId config);
  void dispatch();
  void handle(const Event& ev);
  void finish_unit(const Attempt& a);
  void take_actions();
  void record(WorkerId w, const Unit& u, double start_s, bool committed);
  void problem(std::string text) { problems_.push_back(std::move(text)); }

  SimCluster cluster_;
  std::mt19937_64 rng_;
  ExperimentControl control_;
  double now_ = 0;
  int64_t next_seq_ = 0, next_attempt_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::map<WorkerId, std::vector<PartitionId>> holdings_;
  std::map<WorkerId, Attempt> attempts_;
  std::map<ConfigId, double> speed_;
  std::map<ConfigId, nlohmann::json> params_;
  std::map<ConfigId, FakeState> latest_;
  std::map<ConfigId, std::map<int32_t, FakeState>> epoch_end_;
  std::map<std::pair<ConfigId, int32_t>, double> accuracy_;
  std::map<ConfigId, StateCopy> pending_copies_;
  std::map<ConfigId, FakeState> copied_into_;  // the state a target's next unit must start from
  std::map<ConfigId, int32_t> epochs_completed_;
  std::vector<UnitRecord> log_;
  std::vector<SearchDecision> decisions_;
  std::vector<StateCopy> copies_;
  std::vector<std::string> problems_;
  ReplayPolicy::VisitOrder visit_order_;
};

}  // namespace cerebro::test
