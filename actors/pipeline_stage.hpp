#pragma once
// Pipeline stages as actors: each stage of a config is a detached
// actor around a models::StageRunner, and a driver moves a unit's
// micro-batches through them as typed messages (runtime/net/pipeline_messages.hpp):
// activations forward, their gradients backward, then one optimizer step per
// stage. The same code runs the stages in one process or, through CAF's
// middleman, in several. The scheduler's pipeline attempts use both: a host
// worker spawns its stage, the driver worker runs train_unit_through_stages
// (actors/scheduler_pipeline.cpp, actors/worker.cpp).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "datasets/augmentation.hpp"
#include "datasets/dataset.hpp"
#include "models/pipeline_runner.hpp"
#include "runtime/base/status.hpp"
#include "runtime/net/pipeline_messages.hpp"

namespace cerebro {

// What a stage is built from: the config, the split and its own state.
struct stage_setup {
  nlohmann::json params;
  models::ShapeInfo shape;
  int stages = 2;
  int index = 0;
  std::string state;  // this stage's state (one element of unpack_stage_states)
  uint64_t seed = 0;  // the unit's seed: the stage's dropout stream
};

// Builds the stage (in this thread: a bad config or state is an error here)
// and spawns its actor, which owns it.
Result<pipeline_stage_actor> spawn_pipeline_stage(caf::actor_system& system, const stage_setup& setup);

// What a unit through the stage actors gives: the stages' states framed as
// the config's state, and the unit's loss.
struct pipeline_unit_result {
  std::string state;  // pack_stage_states of the stages' states
  double train_loss = 0;
  int64_t examples = 0;
  bool diverged = false;
};

// Trains one unit (a pass over `partition` in the order train_unit takes it)
// through `stages`, stage 0 first, in the GPipe schedule: every micro-batch of
// a batch forward (a stage works on micro-batch j + 1 while the next works
// on j), then backward in reverse, then one step per stage. An error of any
// stage (or no answer within `timeout_s`) fails the whole unit: no state.
Result<pipeline_unit_result> train_unit_through_stages(caf::actor_system& system,
                                                       const std::vector<pipeline_stage_actor>& stages,
                                                       const nlohmann::json& params, const models::ShapeInfo& shape,
                                                       const datasets::Dataset& partition, uint64_t seed,
                                                       double timeout_s,
                                                       const datasets::Augmentation& augmentation = {});

}  // namespace cerebro
