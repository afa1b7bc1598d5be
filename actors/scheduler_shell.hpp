#pragma once
// The scheduler actor's state and the helpers its two files share
// (actors/scheduler.cpp: units alone, workers, steering; actors/
// scheduler_gangs.cpp: data-parallel gangs, issue 14). Internal to actors/.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/actors.hpp"
#include "runtime/store/state_cache.hpp"

namespace cerebro::scheduler_detail {

using Clock = std::chrono::steady_clock;

// The answers of a data-parallel gang's members as they come in (issue 14).
struct GangReplies {
  GangDispatch gang;
  double start_s = 0;
  std::vector<std::optional<gang_result>> results;  // good answers, by rank
  std::vector<bool> replied;                        // any answer, by rank
  bool failed = false;
};
using SharedGang = std::shared_ptr<GangReplies>;

struct scheduler_state {
  scheduler_config config;
  std::map<caf::actor_addr, WorkerId> worker_ids;
  std::map<WorkerId, worker_actor> workers;
  Clock::time_point started;
  bool finished = false;
  double unit_span_s = 0;  // dispatch to durable acknowledgement, committed units
  // Members of a gang whose result is being made durable. A member lost
  // meanwhile leaves the book only once the commit answers: the gang's units,
  // durable by then, must not go back to the queue (they would commit twice).
  // (A unit alone is handed over to the book for its commit, issue 11: its
  // worker is free at once, and the book keeps the unit; see MopBook::hand_over.)
  std::set<WorkerId> committing;
  std::map<WorkerId, std::pair<std::string, bool>> leaving;  // why, whether its unit failed
  // Where data-parallel gangs meet (issue 14); spawned with the scheduler.
  rendezvous_actor board;
  std::map<int64_t, SharedGang> gangs;  // running gang attempts by id
  // Members of a failed gang that have not answered yet: still inside the
  // attempt (Gloo waits for the dead peer until the timeout), so out of the
  // schedule until they answer, with the partitions they hold.
  std::map<WorkerId, std::vector<PartitionId>> draining;
  // The latest durable states of configs whose last unit committed here
  // (issue 11 item 5): their next unit starts without reading the store.
  // Off under test fault injection, whose damaged and unreadable states must
  // be read back from the store to be found.
  DurableStateCache durable_states;
  // Configs whose state is read into durable_states before their first unit
  // (one read at a time, from the start); a config leaves the set when a unit
  // of it is dispatched or its state is written otherwise, and a read that
  // answers after that is dropped (it may be older than the config's state).
  std::set<ConfigId> prefetch_wanted;
  bool prefetching = false;  // a read is in flight
  static inline const char* name = "cerebro.scheduler";

  double elapsed() const {
    return config.clock_offset_s + std::chrono::duration<double>(Clock::now() - started).count();
  }
};

using scheduler_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

// A progress snapshot with this event line to the listener.
void report(scheduler_ptr self, const std::string& event);
// Starts what ExperimentControl dispatches now (units and gangs).
void dispatch(scheduler_ptr self);
// Persists the search procedure's decisions, makes its proposals and copies.
void apply_search(scheduler_ptr self);
// After a gang's commit answered: a member lost while it was in flight leaves now.
bool finish_leaving(scheduler_ptr self, WorkerId id);
// The task of unit d for its worker, from the config's state.
unit_task make_task(scheduler_ptr self, const Dispatch& d, StateBytes state);
// A damaged state stops the run (true); any other load failure is the caller's.
bool state_unavailable(scheduler_ptr self, ConfigId config, const caf::error& e);

// Data-parallel gangs (actors/scheduler_gangs.cpp).
void run_gang(scheduler_ptr self, const GangDispatch& gang);
// The gang's attempt failed in the control: members still inside it drain.
void drain_gang(scheduler_ptr self, const SharedGang& g);

// Pipeline attempts (actors/scheduler_pipeline.cpp).
void run_pipeline(scheduler_ptr self, const PipelineDispatch& p);

}  // namespace cerebro::scheduler_detail
