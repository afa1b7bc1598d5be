#pragma once
// The run follower's side of steering by hand (the REPL through the
// coordinator's gateway): the follower owns the run's state store and data,
// so it answers the read-only commands (show, top, export, configs) and
// prepares added and cloned configs (parameters checked, initial state
// durable) before the scheduler actor applies the change to
// ExperimentControl. No actor here: plan() says what the scheduler must
// change, if anything, and finish() makes the answer once it has.
//
// answer_from_store serves the read-only commands of a finished run too (the
// gateway opens its store), so both paths print the same thing.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/store/state_store.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/pipeline_plan.hpp"

namespace cerebro {

// What the command answers (control_reply.json), per command:
//   show    {"config", "params", "status", "error", "metric", "epochs": [{"epoch",
//            "train_loss", "val_loss", "val_accuracy", "seconds"}], "actions": [user actions on it]}
//   top     {"metric", "paused", "configs", "rows": [{"rank", "config", "status", "epochs", "metric"
//            (null before its first validation), "params"}]}   (rows: r.rows, 0 = all)
//   configs {"configs": [ids]}
//   export  {"config", "bytes"} with the TorchScript file in control_reply.file
//   detail  runtime/api/experiment_view.hpp experiment_view(); units: units_view(log, r.since)
// `scratch_dir` holds the export's temporary file; `paused` is reported by top.
Result<control_reply> answer_from_store(const StateStore& store, const control_request& r,
                                        const std::string& scratch_dir, bool paused);

struct SteeringContext {
  std::shared_ptr<StateStore> store;
  models::ShapeInfo shape;
  std::shared_ptr<const datasets::Dataset> pilot;       // a new config's pilot forward pass
  std::shared_ptr<const datasets::Dataset> validation;  // a clone's state must load and evaluate
  int32_t epochs = 0;                                   // planned epochs of an added config
  uint64_t seed = 0;
  bool can_add = false;  // grid and random searches only
  std::string run_dir;
  ConfigId next_config = 0;  // the id the next added config gets
  // What an added config's plan is made under, asked at each add:
  // the run's live workers and [cluster] model_memory_mb.
  std::function<PipelineLimits()> pipeline_limits;
  // An objective is `parameters`: an added config's count is kept for the
  // live Pareto front, as the run's own configs' are.
  bool count_parameters = false;
};

// A change of the schedule a steering request needs: the scheduler actor's
// (control_atom, command, config, params_json, epochs, cloned_from, stages),
// runtime/net/interfaces.hpp.
struct ScheduleChange {
  SteeringCommand command = SteeringCommand::pause;
  ConfigId config = -1;
  std::string params_json = "{}";
  int32_t epochs = 0;
  ConfigId cloned_from = -1;
  int32_t stages = 1;
};

// What a request needs: the answer at once (no change), or the change first.
struct SteeringPlan {
  control_reply reply;  // the answer when there is no change
  std::optional<ScheduleChange> change;
};

class ExperimentSteering {
 public:
  // Records the data shape in the store (meta "shape") for exports after the run.
  explicit ExperimentSteering(SteeringContext context);

  // What `r` (from the gateway) needs on this running experiment: read-only
  // commands are answered from the store; pause, resume and stop are
  // checked; an added or cloned config is prepared (parameters checked, its
  // pilot or its parent's state evaluated, its initial state and record
  // durable). Blocks for store reads, exports and pilot checks. A refused
  // request is an error naming why (invalid_argument, not_found,
  // failed_precondition: the HTTP API answers 400, 404, 409).
  Result<SteeringPlan> plan(const control_request& r);
  // The scheduler answered a plan's change (`applied`: ok, or why not): the
  // answer to its request, with its effects kept (pause remembered, a stop
  // recorded in the store, an added config that did not join recorded as
  // failed).
  Result<control_reply> finish(const ScheduleChange& change, const Status& applied);

 private:
  Result<SteeringPlan> add(const control_request& r);
  Result<std::string> initial_state_of(bool clone, const ConfigRecord& base, const nlohmann::json& params,
                                       int32_t stages, ConfigId id);

  SteeringContext context_;
  bool paused_ = false;
};

}  // namespace cerebro
