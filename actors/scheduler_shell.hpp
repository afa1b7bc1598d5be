#pragma once
// The scheduler actor's state and the helpers its files share, internal to
// actors/: scheduler.cpp (the behaviour, workers joining and leaving),
// scheduler_units.cpp (units alone, dispatch, states read ahead),
// scheduler_search.cpp (the search's and a person's changes),
// scheduler_gangs.cpp (data-parallel gangs) and scheduler_pipeline.cpp
// (pipeline attempts). The decisions are plain code: ExperimentControl
// (what runs next, what a result counts), WorkerRoster (when a lost worker
// leaves the book, which gang members drain) and KeptStates (the states
// handed to the next units without a store read). The shell turns messages
// into their calls and their answers into messages.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/actors.hpp"
#include "runtime/scheduling/kept_states.hpp"
#include "runtime/scheduling/worker_roster.hpp"

namespace cerebro::scheduler_detail {

using Clock = std::chrono::steady_clock;

// A running gang attempt's good answers, by rank, until it commits.
struct GangRun {
  double start_s = 0;
  std::vector<std::optional<gang_result>> results;
};

struct scheduler_state {
  scheduler_config config;
  // The handles of the roster's workers, and who is who in down messages.
  std::map<WorkerId, worker_actor> workers;
  std::map<caf::actor_addr, WorkerId> worker_ids;
  std::unique_ptr<WorkerRoster> roster;  // over *config.control
  std::unique_ptr<KeptStates> states;
  // Where data-parallel gangs meet; spawned with the scheduler.
  rendezvous_actor board;
  std::map<int64_t, GangRun> gangs;  // running gang attempts by id
  Clock::time_point started;
  bool finished = false;
  double unit_span_s = 0;  // dispatch to durable acknowledgement, committed units
  static inline const char* name = "cerebro.scheduler";

  double elapsed() const {
    return config.clock_offset_s + std::chrono::duration<double>(Clock::now() - started).count();
  }
};

using scheduler_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

// --- scheduler.cpp
// A progress snapshot with this event line to the listener.
void report(scheduler_ptr self, const std::string& event);
// The line of what a call of the control made happen (event_line), reported as above.
void report(scheduler_ptr self, const ControlEvents& events);
// The experiment is over (done, or it cannot go on): the listener hears it
// once and the scheduler quits.
void finish(scheduler_ptr self, experiment_done done);
// Every config is done: finish.
void finish_if_done(scheduler_ptr self);
// Without any worker, and with no commit left to answer, the experiment
// cannot go on: it ends here. Returns whether it did.
bool end_without_workers(scheduler_ptr self);
// Carries out a lost worker's leave (WorkerRoster::Leave): its unit goes
// back to the queue, its gang's attempt fails; then dispatches.
void leave_book(scheduler_ptr self, const WorkerRoster::Leave& leave);
// A commit of these workers answered: those lost meanwhile leave now.
// Returns whether any did (leave_book dispatched then).
bool leave_after_commit(scheduler_ptr self, const std::vector<WorkerId>& workers);

// --- scheduler_units.cpp
// Starts what ExperimentControl dispatches now (units, gangs, pipelines).
void dispatch(scheduler_ptr self);
// Reads the next wanted config's state ahead (KeptStates), one at a time.
void prefetch_next(scheduler_ptr self);
// The task of unit d for its worker, from the config's state.
unit_task make_task(scheduler_ptr self, const Dispatch& d, StateBytes state);
// A damaged state stops the run (true); any other load failure is the caller's.
bool state_unavailable(scheduler_ptr self, ConfigId config, const caf::error& e);

// --- scheduler_search.cpp
// Persists the search procedure's decisions, makes its proposals and copies.
void apply_search(scheduler_ptr self);
// A person's steering, applied to the control (see the control_atom message).
caf::result<bool> steer(scheduler_ptr self, SteeringCommand command, ConfigId config, const std::string& params_json,
                        int32_t epochs, ConfigId cloned_from, int32_t stages);

// --- scheduler_gangs.cpp
void run_gang(scheduler_ptr self, const GangDispatch& gang);
// The gang's attempt ended without a commit: its members still inside drain
// (WorkerRoster::fail_gang) and its keys leave the rendezvous board.
void end_gang(scheduler_ptr self, int64_t gang);

// --- scheduler_pipeline.cpp
void run_pipeline(scheduler_ptr self, const PipelineDispatch& p);

}  // namespace cerebro::scheduler_detail
