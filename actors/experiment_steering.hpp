#pragma once
// The experiment runner's side of steering by hand (the REPL through the
// coordinator's gateway): the runner owns the run's state store and data, so
// it answers the read-only commands (show, top, export, configs) and prepares
// added and cloned configs (parameters checked, initial state durable) before
// the scheduler actor applies the change to ExperimentControl.
//
// answer_from_store serves the read-only commands of a finished run too (the
// gateway opens its store), so both paths print the same thing.

#include <functional>
#include <memory>
#include <string>

#include <caf/all.hpp>

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
  scheduler_actor scheduler;
  models::ShapeInfo shape;
  std::shared_ptr<const datasets::Dataset> pilot;       // a new config's pilot forward pass
  std::shared_ptr<const datasets::Dataset> validation;  // a clone's state must load and evaluate
  int32_t epochs = 0;                                   // planned epochs of an added config
  uint64_t seed = 0;
  bool can_add = false;  // grid and random searches only
  std::string run_dir;
  ConfigId next_config = 0;  // the id the next added config gets
  // What an added config's plan is made under (issue 14), asked at each add:
  // the run's live workers and [cluster] model_memory_mb.
  std::function<PipelineLimits()> pipeline_limits;
  // An objective is `parameters`: an added config's count is kept for the
  // live Pareto front, as the run's own configs' are.
  bool count_parameters = false;
};

class ExperimentSteering {
 public:
  // Records the data shape in the store (meta "shape") for exports after the run.
  explicit ExperimentSteering(SteeringContext context);

  // Carries out `r` (from the gateway) on this running experiment: blocks the
  // runner for pilot checks and store reads; asks the scheduler (through
  // `self`) to apply changes. A refused request is an error naming why.
  Result<control_reply> handle(caf::blocking_actor* self, const control_request& r);

 private:
  Result<control_reply> add(caf::blocking_actor* self, const control_request& r);
  Status tell_scheduler(caf::blocking_actor* self, SteeringCommand command, ConfigId config,
                        const std::string& params_json = "{}", ConfigId cloned_from = -1, int32_t stages = 1);

  SteeringContext context_;
  bool paused_ = false;
};

}  // namespace cerebro
