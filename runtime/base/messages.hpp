#pragma once
// The messages the actors exchange, as plain structs: the core builds and
// reads them without CAF. Their CAF `inspect` functions, atoms and type
// registration live in runtime/net/messages.hpp. Model state travels as bytes
// (weights, buffers and optimizer state): that is what hops.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/lifecycle.hpp"

namespace cerebro {

// Serialized model + optimizer state.
using StateBytes = std::string;

// One unit of work for a worker: train config's model over a partition.
struct unit_task {
  std::string experiment;  // which experiment's partitions to train on
  std::vector<int64_t> sample_shape;
  int64_t num_classes = 0;  // classes, or the target width (regression, multilabel)
  // The task (datasets/task_kind.hpp name; "" = classification) and, for
  // regression, the training targets' stddev: validation metrics are in the
  // targets' own units.
  std::string task;
  std::vector<float> target_stddev;
  int32_t beam = 1;  // captioning: [experiment] beam, the hypotheses a validation decodes with
  ConfigId config = 0;
  PartitionId partition = 0;
  int32_t epoch = 0;
  int32_t attempt = 0;
  uint64_t seed = 0;      // batch order and dropout of this unit
  bool validate = false;  // the config's last unit of its epoch: evaluate after
  // Training-time augmentation ([data] augment), drawn from `seed`.
  bool augment_hflip = false;
  int32_t augment_crop_padding = 0;  // > 0: random crops with this padding
  bool read_ahead = false;           // [data] read_ahead: a mapped partition's batches gathered ahead
  // The config's hyper-parameters as JSON text: user data with arbitrary
  // keys and value types (runtime/spec/param_value.hpp), read by the trainer.
  std::string params_json;
  StateBytes state;  // the state to start from
};

// What a worker answers: the new state and the unit's metrics and timings.
struct unit_result {
  ConfigId config = 0;
  PartitionId partition = 0;
  int32_t epoch = 0;
  WorkerId worker = 0;
  UnitStatus status = UnitStatus::ok;
  std::string error;  // for failed
  StateBytes state;
  double train_loss = 0;
  int64_t examples = 0;
  bool has_validation = false;
  double val_loss = 0, val_accuracy = 0;
  std::map<std::string, double> val_metrics;  // the task's (or template's) named metrics
  double restore_s = 0, train_s = 0, validate_s = 0, save_s = 0;
  // Set by the scheduler: when the result reached it, on the run's clock
  // (the worker is free from then on); -1 until then.
  double result_s = -1;
  // Set by the scheduler for a pipeline attempt's unit: its
  // crew, the driver (stage 0) then the stages' hosts; empty otherwise.
  std::vector<WorkerId> pipeline_workers;
};

// What the scheduler tells whoever follows the experiment, after each
// committed unit and config epoch.
struct progress_update {
  int64_t units_done = 0;
  int64_t units_total = 0;
  double elapsed_s = 0;
  ConfigId best_config = -1;
  double best_metric = 0;
  std::string event;  // a human line, e.g. "config 3 epoch 1: val_accuracy 0.871"
  // The epochs the live configs are in (lowest, highest): configs advance on
  // their own under MOP.
  int32_t epoch_low = 0, epoch_high = 0;
  // What runs now: per busy worker its scheduler id, its agent (filled in by
  // the runner) and its unit, e.g. "config 2 / partition 1 / epoch 0".
  std::vector<int32_t> running_workers;
  std::vector<std::string> running_agents;
  std::vector<std::string> running_units;
  // Failed unit attempts so far (each retried, or failing its config): the
  // unit log keeps committed units only. For /metrics.
  int64_t units_failed = 0;
  // Several objectives: the Pareto front so far, as the JSON text
  // of runtime/api/pareto_view.hpp's pareto_of ({"objectives", "final",
  // "front"}), filled in by the run's follower; empty for one objective.
  std::string pareto_json;
};

// Sent once when every config has finished, stopped, diverged or failed.
struct experiment_done {
  double wall_s = 0;
  // Sum over committed units of dispatch-to-durable-acknowledgement time: the
  // denominator of the hop overhead (the log's end_s precedes the commit).
  double unit_span_s = 0;
  std::string error;  // empty unless the experiment itself could not go on
  // A checkpoint failed its checksum while training (the checkpoint actor
  // answered StatusCode::corruption): the run stopped so that it resumes
  // from the newest intact states (the runner does so at once).
  bool damaged_state = false;
};

// PBT's exploit step for the checkpoint actor: config `to`'s latest state
// becomes the state `from` had at the end of its epoch `from_epoch`, and `to`
// trains with hyper-parameters `params_json` (JSON text, like unit_task's)
// from now on.
struct state_copy {
  ConfigId from = 0;
  int32_t from_epoch = 0;
  ConfigId to = 0;
  std::string params_json;
};

}  // namespace cerebro
