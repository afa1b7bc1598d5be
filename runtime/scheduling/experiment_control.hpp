#pragma once
// The scheduler's logic, as a plain class: which unit an idle worker runs
// next, what a committed or failed unit changes, epoch-boundary decisions of
// the search procedure (continue, stop, PBT's exploit), divergence, retries and
// progress. The scheduler actor is a thin shell that routes messages to it;
// tests drive it directly.
//
// The on_* calls return what they made happen as ControlEvents
// (control_event.hpp): the shell reports event_line() of them. Misuse by the
// shell (confirming what was never issued) and a search procedure's decision
// the schedule cannot take are contract violations (runtime/base/contract.hpp);
// the expected failures of restoring a run are Status values.
//
// What the shell must do besides dispatch() and the on_* calls:
//  - persist take_decisions() (every epoch-boundary decision, in order) next
//    to the unit log, so show, replay and resume see them;
//  - execute take_state_copies() (PBT) and confirm each with on_state_copied()
//    (or on_state_copy_failed()); the target config is not dispatched before.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/messages.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/control_event.hpp"
#include "runtime/scheduling/gang_planner.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/pipeline_dispatch.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

// A unit an idle worker should run now.
struct Dispatch {
  WorkerId worker = 0;
  Unit unit;
  uint64_t seed = 0;      // per-unit seed, independent of the schedule
  bool validate = false;  // last unit of the config's epoch
  int32_t attempt = 0;
};

// A data-parallel gang to start now: one attempt of one config over
// k >= 2 of its pending partitions at once, members[r] being rank r (each
// with its unit's own seed, so a rank passes over its partition in the order
// that unit would have alone). Rank 0's state is the gang's result; the shell
// commits it once for all k units (StateStore::commit_gang), then calls
// on_gang_committed, or on_gang_failed if any member failed.
struct GangDispatch {
  int64_t id = 0;                 // this attempt's id, unique within the control
  std::vector<Dispatch> members;  // rank order; members[0].validate: the gang ends the epoch
  int32_t attempt = 0;            // the most failed attempts of its units so far
  ConfigId config() const { return members.front().unit.config; }
  int32_t size() const { return static_cast<int32_t>(members.size()); }
};

// A pipeline attempt to start now: ONE unit of a config whose plan
// has k >= 2 stages, driven by `driver.worker` (it holds the partition and
// hosts stage 0) with stages 1..k-1 on `hosts`, which are out of the schedule
// until the attempt ends. The shell commits the driver's one result (the
// framed pipeline state) as an ordinary unit, then calls
// on_pipeline_committed, or on_pipeline_failed (experiment_control_pipeline.cpp).
struct PipelineDispatch {
  int64_t id = 0;  // PipelineAttempts' id
  Dispatch driver;
  std::vector<WorkerId> hosts;  // stage s on hosts[s - 1]
  std::string label;            // pipeline_label: "pipeline over 2 stages (workers 0, 1)"
  int32_t stages() const { return 1 + static_cast<int32_t>(hosts.size()); }
};

// What dispatch_all() starts: units alone, gangs and pipeline attempts.
struct DispatchBatch {
  std::vector<Dispatch> units;
  std::vector<GangDispatch> gangs;
  std::vector<PipelineDispatch> pipelines;
  // What the shell reports, a line each: a pipeline config that waits for
  // workers (said once), or failed because it never can have them
  // (crew_outlook); a failed one was ended in the search too, so the shell
  // persists its decisions (apply_search) and dispatches again.
  std::vector<ControlEvents> notices;
  bool empty() const { return units.empty() && gangs.empty() && pipelines.empty(); }
};

// A state copy the shell must execute before config `to` trains again (PBT's
// exploit step): `to`'s latest state becomes the state `from` had at the end of
// its epoch `from_epoch` (weights, buffers and optimizer state, exactly), and
// `to` trains with hyper-parameters `params` from now on. The checkpoint store
// must therefore keep each config's epoch-end states, not only its latest one:
// `from` may have trained on since. `to` keeps its own epoch count.
struct StateCopy {
  ConfigId to = 0;
  ConfigId from = 0;
  int32_t from_epoch = 0;
  nlohmann::json params;
};

struct ConfigOutcome {
  ConfigStatus status = ConfigStatus::running;
  std::string error;
};

// The seed of a unit: a function of (experiment seed, config, epoch,
// partition) only, so any schedule (and a replay) trains each unit the same.
uint64_t unit_seed(uint64_t experiment_seed, const Unit& unit);

class ExperimentControl {
 public:
  using Metric = cerebro::Metric;  // runtime/spec/metric.hpp

  ExperimentControl(int32_t num_partitions, uint64_t seed, Metric metric, int max_unit_retries,
                    std::unique_ptr<SchedulingPolicy> policy, std::unique_ptr<SearchProcedure> search);

  void add_worker(WorkerId w, std::vector<PartitionId> holds);
  // The worker is gone (e.g. its node died); its unit (if any) goes back to
  // the queue, not counted as a failed attempt.
  void remove_worker(WorkerId w);
  // The worker actor died while running its unit: the worker is removed and
  // the unit counts as a failed attempt (retried up to max_unit_retries, like
  // on_failed).
  ControlEvents on_worker_died(WorkerId w, const std::string& error);
  void add_config(ConfigId c, int32_t epochs);
  // Config c's cost prior for the policy (SchedulingPolicy::set_cost_prior);
  // call before dispatching, e.g. with CostPriors::apply_to.
  void set_cost_prior(ConfigId c, double seconds_per_example) { policy_->set_cost_prior(c, seconds_per_example); }
  // A config that could not start (pilot check failed) is recorded as failed.
  void reject_config(ConfigId c, const std::string& error);

  // Lets the control run configs as data-parallel gangs: its
  // GangPlanner, next to the policy, turns a picked unit into a gang when the
  // mode says so (data: whenever idle holders can join; auto: when the cost
  // model says it is sooner). Without this call (or with mop) every unit runs
  // alone.
  void set_parallelism(Parallelism mode, GangCosts costs);
  Parallelism parallelism() const { return planner_ ? planner_->mode() : Parallelism::mop; }
  const GangPlanner* planner() const { return planner_ ? &*planner_ : nullptr; }
  // A measured allreduce per step of a config's gradients over `members`
  // ranks (a probe): what auto waits for before it forms a gang.
  void observe_allreduce(int32_t members, double seconds_per_step) {
    if (planner_) planner_->observe_allreduce(members, seconds_per_step);
  }

  // Units to start now, one per idle worker that has eligible work, and the
  // gangs the planner formed of idle workers.
  DispatchBatch dispatch_all();
  // dispatch_all() for shells that run units alone only: a contract
  // violation if a gang was formed (set_parallelism was called with auto or data).
  std::vector<Dispatch> dispatch();

  // The gang's k units and its one state are durable (entries as
  // StateStore::commit_gang returned them, in rank order). `steps` and
  // `allreduce_s` are rank 0's global steps and seconds in allreduces: the
  // planner learns the allreduce cost from them. Returns what on_committed
  // does. A contract violation if `gang` is not running.
  ControlEvents on_gang_committed(int64_t gang, const std::vector<UnitLogEntry>& entries, int64_t steps,
                                  double allreduce_s);
  // The gang's attempt failed (a member's error, a peer gone or hung past
  // the timeout): nothing of it counts, every unit is pending again (from the
  // config's last committed state) and its workers are free for other work.
  // Each unit's failed attempts count as in on_failed. Unknown gang: no-op
  // (it already failed, e.g. when a member's worker was removed).
  ControlEvents on_gang_failed(int64_t gang, const std::string& error);
  // A replay: the original run's gangs, each its members' units
  // in rank order. A unit the policy picks that belongs to one of them runs
  // in that gang, ranks as recorded, once a worker holding each other
  // member's partition is idle at the same time (until then the picking
  // worker waits); the others run alone. invalid_argument (and no recorded
  // gang) for a gang of fewer than 2 units, or of units of different configs
  // or epochs.
  Status set_recorded_gangs(const std::vector<std::vector<Unit>>& gangs);
  // The gang worker w runs in, if any.
  std::optional<int64_t> gang_of(WorkerId w) const;
  bool gang_running(int64_t gang) const { return gangs_.count(gang) > 0; }

  // --- Pipeline configs (experiment_control_pipeline.cpp).
  // Config c trains as a pipeline over `stages` >= 2 stages (its plan): each
  // of its units takes a crew of `stages` idle workers (choose_pipeline_crew)
  // for one attempt. The rule while a crew cannot form: the worker the policy
  // gave the unit stays idle (reserved) and every worker that frees up and is
  // given the unit joins the reservation, until `stages` are idle at once;
  // meanwhile the other configs run on the other workers. stages < 2 is a
  // contract violation; an unknown config is not_found. Known are the
  // configs in the schedule, those proposed and not yet created (call it
  // before on_config_created, or pass the stages there) and, resuming a
  // search that proposes, the recorded ones not yet re-proposed (their
  // stages hold once they rejoin).
  Status set_pipeline_stages(ConfigId c, int32_t stages);
  int32_t pipeline_stages(ConfigId c) const;  // 1: trains whole
  // The cluster can have no more than `workers` workers (> 0; an embedded
  // cluster: no agent joins, a dead worker is respawned; fewer is a contract
  // violation): a pipeline config
  // whose stages outnumber them fails at the next dispatch instead of
  // waiting (crew_outlook). Without this call workers may join: such a
  // config waits, and dispatch_all says so once (DispatchBatch::notices).
  void set_fixed_workers(int32_t workers);
  // The attempt's one unit is durable (entry as the store returned it): its
  // hosts rejoin the schedule and the unit counts as on_committed's does.
  // A contract violation if the attempt is not running or ran another unit.
  ControlEvents on_pipeline_committed(int64_t attempt, const UnitLogEntry& entry);
  // The attempt failed (a stage's error, a host lost, the commit failed):
  // the unit is pending again from the config's last durable state and counts
  // a failed attempt as on_failed does; the hosts rejoin the schedule.
  // Unknown attempt: no-op (it ended when its driver was removed).
  ControlEvents on_pipeline_failed(int64_t attempt, const std::string& error);
  bool pipeline_running(int64_t attempt) const { return pipelines_.running(attempt); }
  // The attempt worker w drives or hosts a stage of, if any.
  std::optional<int64_t> pipeline_of(WorkerId w) const { return pipelines_.attempt_of(w); }
  const PipelineAttempts& pipelines() const { return pipelines_; }

  // The unit's result reached the shell, which now makes it durable: worker
  // w is free for its next unit at once (dispatch() may hand it one of
  // another config), while u's config stays busy until on_committed (counts
  // u) or on_commit_failed (u runs again) answers. A worker removed or dead
  // meanwhile leaves at once and does not touch u. A contract violation
  // (the book's) unless w runs u alone.
  void on_result(WorkerId w, const Unit& u);
  // The commit of a unit handed over by on_result() failed: the unit is
  // pending again and the failure counts as on_failed's does.
  ControlEvents on_commit_failed(const Unit& u, const std::string& error);

  // The unit's state and log entry are durable (handed over by on_result(),
  // or still on worker w for shells that commit before freeing the worker).
  // Returns the epoch's scores and the decisions they led to when the
  // config's epoch ended (or its divergence), else nothing. A search
  // procedure deciding for a config that is not awaiting that decision is a
  // contract violation (a bug in the procedure).
  ControlEvents on_committed(WorkerId w, const UnitLogEntry& entry);
  // The unit's attempt failed (exception in the worker). Retried up to
  // max_unit_retries times, then its config fails with `error`.
  ControlEvents on_failed(WorkerId w, const Unit& unit, const std::string& error);

  // Epoch-boundary decisions taken since the last call, in the order they were
  // applied (every boundary of every config gets one, plain continues included).
  std::vector<SearchDecision> take_decisions();
  // State copies to execute (PBT exploit steps) since the last call.
  std::vector<StateCopy> take_state_copies();
  // The copy to config `to` is durable: `to` enters its next epoch (or
  // finishes). A contract violation if no copy to `to` is pending.
  ControlEvents on_state_copied(ConfigId to);
  // The copy could not be made: config `to` fails with `error`.
  ControlEvents on_state_copy_failed(ConfigId to, const std::string& error);
  // A copy to config c was issued and is not confirmed yet.
  bool copy_pending(ConfigId c) const { return pending_copies_.count(c) > 0; }

  bool all_done() const { return book_.all_done() && pending_creation_.empty(); }

  // --- Configs the search procedure proposes as it goes (tpe). Each
  // proposal is the shell's to make durable (initial state with its pilot
  // check, config record), then to confirm: on_config_created adds it to the
  // schedule, on_config_rejected records it as failed (which frees its slot,
  // so the procedure may propose again). Until then the experiment is not done.

  // Proposals not yet taken, in order.
  std::vector<ConfigProposal> take_proposals();
  // `stages` >= 2: the config trains as a pipeline over that many stages
  // (its plan), set before it joins the schedule.
  void on_config_created(ConfigId c, int32_t stages = 1);
  ControlEvents on_config_rejected(ConfigId c, const std::string& error);
  bool creation_pending(ConfigId c) const { return pending_creation_.count(c) > 0; }
  // Resuming such a search: the configs the run recorded. A re-derived
  // proposal of a recorded id is not proposed again: the config joins the
  // schedule at once (or fails at once, if its record says failed), with its
  // recorded params. Call before restore().
  int64_t units_done() const { return book_.units_done(); }
  int64_t units_total() const { return book_.units_total(); }
  std::optional<std::pair<ConfigId, double>> best() const;
  // Where the experiment stands, for whoever follows it: units done of all,
  // the best config so far, the epochs the live configs are in and what runs
  // on which worker. `elapsed_s` is the run's clock. The event line and the
  // workers' agents are the shell's to fill in.
  progress_update progress(double elapsed_s) const;
  const std::map<ConfigId, ConfigOutcome>& outcomes() const { return outcomes_; }
  bool better(double a, double b) const;  // is metric value a better than b
  const MopBook& book() const { return book_; }
  const SearchProcedure& search() const { return *search_; }

  // Resuming a run: replays its committed unit log (commit order) into the
  // book and the search procedure, which re-derives every epoch-boundary
  // decision; logged units are done and never dispatched again. Call after
  // add_config/reject_config and before dispatching. Returns the re-derived
  // decisions (the shell records them in place of the old ones). A state copy
  // whose target trained since was made before the stop and is confirmed; the
  // others stay pending for the shell to make (again: copying is idempotent).
  // invalid_argument if the log contradicts MOP (e.g. a unit twice); the
  // control is then of no further use.
  struct Restored {
    std::vector<SearchDecision> decisions;
    int64_t units = 0;
  };
  Result<Restored> restore(const std::vector<UnitLogEntry>& log);
  void set_recorded_configs(const std::vector<ConfigRecord>& records);

  // --- Steering by a person (the REPL, through the scheduler actor). Each
  // call returns an error Status for a request that cannot apply (unknown or
  // ended config, ...) and changes nothing then; an applied one leaves a
  // record (runtime/steering.hpp) for take_user_actions(), which the shell
  // persists with the decisions.

  // While paused dispatch() starts nothing; running units finish and commit
  // as usual, so nothing is lost. resume() lets dispatch() start units again.
  Status pause();
  Status resume();
  bool paused() const { return paused_; }
  // Ends config c now: none of its units is dispatched again and the
  // completion of a unit of it still running is ignored; its last committed
  // state stays its checkpoint. Its outcome is "stopped".
  Status stop_config(ConfigId c);
  // Adds config c mid-run: it joins at its first epoch and trains `epochs`
  // epochs like any other (its initial state must already be durable: fresh,
  // or cloned from config `cloned_from`'s latest state when >= 0). Only for
  // procedures that train every config for its planned epochs (grid,
  // random): the others plan their rungs and populations up front.
  // `stages` >= 2: it trains as a pipeline over that many stages (its plan,
  // or its parent's split), set before it joins the schedule and recorded
  // with the action ("pipeline_stages").
  Status add_config_by_user(ConfigId c, int32_t epochs, const nlohmann::json& params, ConfigId cloned_from = -1,
                            int32_t stages = 1);
  // Records of the applied steering calls since the last call, in order.
  std::vector<nlohmann::json> take_user_actions();

 private:
  bool paused_ = false;
  std::vector<nlohmann::json> user_actions_;  // not yet taken by the shell

  MopBook book_;
  std::optional<GangPlanner> planner_;  // unless parallelism is mop
  // Running gangs by id, their members in rank order.
  std::map<int64_t, std::vector<MopBook::GangMember>> gangs_;
  int64_t next_gang_ = 0;
  // set_recorded_gangs: each recorded gang's members, found by any of its units.
  std::map<Unit, std::shared_ptr<const std::vector<Unit>>> recorded_gangs_;
  // Pipeline configs' stage counts, the running attempts, and the partitions
  // of each host taken out of the book for an attempt (a host lost meanwhile
  // is dropped: it does not rejoin).
  std::map<ConfigId, int32_t> pipeline_stages_;
  PipelineAttempts pipelines_;
  std::map<WorkerId, std::vector<PartitionId>> pipeline_hosts_;
  int32_t fixed_workers_ = 0;               // set_fixed_workers; 0: workers may join
  std::set<ConfigId> waiting_for_workers_;  // pipeline configs whose wait was reported
  uint64_t seed_;
  Metric metric_;
  int max_unit_retries_;
  std::unique_ptr<SchedulingPolicy> policy_;
  std::unique_ptr<SearchProcedure> search_;
  std::map<ConfigId, ConfigOutcome> outcomes_;
  std::map<Unit, int32_t> failed_attempts_;
  std::map<ConfigId, double> last_metric_;
  std::map<ConfigId, std::pair<double, int64_t>> epoch_loss_;  // weighted sum, examples
  std::map<ConfigId, double> train_seconds_;                   // per config, its units' train_s
  std::vector<SearchDecision> decisions_;                      // not yet taken by the shell
  std::vector<StateCopy> copies_;                              // not yet taken by the shell
  std::map<ConfigId, SearchDecision> pending_copies_;          // issued, not confirmed
  std::vector<ConfigProposal> proposals_;                      // not yet taken by the shell
  std::map<ConfigId, int32_t> pending_creation_;               // proposed, not yet created: planned epochs
  std::map<ConfigId, ConfigRecord> recorded_;                  // resuming: recorded configs not yet re-proposed

  // Takes the procedure's new proposals: recorded ones join at once, the
  // others wait for the shell.
  void collect_proposals();
  void resolve(ConfigProposal proposal);

  // Applies the procedure's decisions to the book; the ones worth saying go
  // into `out`.
  void apply(const std::vector<SearchDecision>& decisions, ControlEvents& out);
  // The config left the search without a decision: tell the procedure.
  void config_ended(ConfigId c, ControlEvents& out);
  void config_ended(ConfigId c) {
    ControlEvents unsaid;
    config_ended(c, unsaid);
  }
  // Counts a failed attempt of u (already pending again): fails its config
  // after max_unit_retries.
  ControlEvents count_failure(const Unit& u, const std::string& error);
  // on_committed without telling the policy (restored units were measured
  // on workers that may not exist any more).
  ControlEvents commit(WorkerId w, const UnitLogEntry& entry);
  // A gang's entries (rank order) counted as its k units; the book must be
  // running exactly `members`.
  ControlEvents commit_gang(const std::vector<MopBook::GangMember>& members, const std::vector<UnitLogEntry>& entries);
  // What every committed unit adds to its config's epoch (loss, seconds).
  void account(const UnitLogEntry& entry);
  // After a config's unit(s) counted: divergence, and the epoch's end (the
  // procedure's decision). `e` is the entry that validated, if any.
  ControlEvents conclude(const UnitLogEntry& e, bool diverged, bool epoch_ended);
  Dispatch make_dispatch(WorkerId w, const Unit& u) const;
  // Starts `members` as a gang (the book checks them) into `out`.
  void start_gang(const std::vector<MopBook::GangMember>& members, DispatchBatch& out);
  // For unit u, picked for idle worker w: nullopt if u is in no recorded
  // gang; else its gang's members in rank order, u on w, the others on
  // workers of `idle` (none if some member's partition has no idle holder).
  std::optional<std::vector<MopBook::GangMember>> recorded_gang_for(WorkerId w, const Unit& u,
                                                                    const std::vector<WorkerId>& idle) const;
  // A member's worker left while its gang ran: the whole attempt fails.
  ControlEvents fail_gang_of(WorkerId w, const std::string& error);
  // dispatch_all's pipeline hook: true when `unit` (picked for idle worker w)
  // is a pipeline config's; then it started an attempt (into out) or w waits.
  bool dispatch_pipeline(WorkerId w, const Unit& unit, const std::vector<WorkerId>& idle, DispatchBatch& out);
  // dispatch_all's check of the pipeline configs against the cluster's size
  // (crew_outlook): reports a wait once, fails a config that can never form
  // its crew. Into out.notices.
  void check_pipeline_crews(DispatchBatch& out);
  // Ends an attempt in the bookkeeping: its hosts still known rejoin the book.
  PipelineCrew end_pipeline(int64_t attempt);
  // Worker w leaves: a host is forgotten (its attempt's driver will fail),
  // a driver ends its attempt (its unit is the book's to requeue).
  void pipeline_worker_leaves(WorkerId w);
};

}  // namespace cerebro
