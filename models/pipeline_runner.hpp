#pragma once
// Pipeline stages for big models, the torch-free face: what the
// stage actors (actors/pipeline_stage.hpp) and the CLI call. A config that
// trains as a pipeline is split along its top-level children into k
// consecutive stages, balanced by training memory
// (runtime/scheduling/pipeline_plan.hpp); each stage holds only its links'
// parameters, buffers and its own optimizer; a batch goes through in
// micro-batches (GPipe: every micro-batch forward, then backward in reverse,
// gradients accumulated, one optimizer step per stage). The config's state is
// its stages' states framed together (runtime/store/pipeline_state.hpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/augmentation.hpp"
#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/base/pipeline_messages.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/pipeline_plan.hpp"

namespace cerebro::models {

// Tensors the optimizer of `params` keeps per parameter tensor (SGD 0, SGD
// with momentum 1, Adam and AdamW 2). ParamError text for bad params.
Result<int> optimizer_state_tensors(const nlohmann::json& params);

// The config's model as a chain: each top-level child's name and training
// memory (training_memory of its parameters and buffers under the config's
// optimizer). A model that is no chain gets one link (the whole model) and
// the reason in not_a_chain.
Result<ModelChain> measure_chain(const nlohmann::json& params, const ShapeInfo& shape);

// How the config trains given the workers and one worker's memory budget:
// plan_pipeline over measure_chain with the config's parallelism and stages.
// Errors name the key (see plan_pipeline) and the hyper-parameter errors are
// check_params' (both invalid_argument); a model that does not build for
// this data is failed_precondition (its config's pilot check says why).
Result<PipelinePlan> plan_config(const nlohmann::json& params, const ShapeInfo& shape, const PipelineLimits& limits);

// How many stages a config created while the run trains (tpe's proposals,
// steering's add) trains over, planned as the run's own configs are:
// plan_config's stages (1: whole) and errors, without building the model
// when nothing could split it (no budget, parallelism not "pipeline").
Result<int> planned_stages(const nlohmann::json& params, const ShapeInfo& shape, const PipelineLimits& limits);

// The initial state of the config split into `stages` stages (weights drawn
// from `seed` exactly as initial_state draws them): a pipeline state.
Result<std::string> initial_pipeline_state(const nlohmann::json& params, const ShapeInfo& shape, int stages,
                                           uint64_t seed);

// Trains one unit with every stage in this thread (in.state: a pipeline
// state; its stage count is the split). The same schedule the stage actors
// run, without messages: the reference they are tested against.
Result<UnitOutput> train_pipeline_unit(const UnitInput& in);

// Evaluates a pipeline state on `data`.
Result<Evaluation> evaluate_pipeline_state(const nlohmann::json& params, const ShapeInfo& shape,
                                           const std::string& state, const datasets::Dataset& data);

// The whole model's state (weights and buffers; a fresh optimizer: each
// stage's optimizer state is its own) of a pipeline state, for what loads a
// trained state into one model: the best model's test score, its export and
// cost. Any other state is returned as it is.
Result<std::string> whole_model_state(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state);

// One stage of a config in this process: its links, its optimizer, and the
// micro-batches in flight between their forward and backward.
class StageRunner {
 public:
  // Stage `index` of `stages` from that stage's state (one element of
  // unpack_stage_states); `seed` draws its dropout.
  static Result<std::unique_ptr<StageRunner>> create(const nlohmann::json& params, const ShapeInfo& shape, int stages,
                                                     int index, const std::string& stage_state, uint64_t seed);
  ~StageRunner();
  StageRunner(const StageRunner&) = delete;
  StageRunner& operator=(const StageRunner&) = delete;

  int index() const;
  int stages() const;
  // Not the last stage: the activation for the next stage.
  Result<stage_tensor> forward(const stage_tensor& input);
  // The last stage: forward and the loss of the micro-batch, divided by the
  // batch's examples so the micro-batches' gradients add up to the batch
  // mean's. Returns the micro-batch's summed loss (not divided).
  Result<double> forward_loss(const stage_tensor& input, const stage_tensor& target, int64_t batch_examples);
  // The gradient of this stage's input for a micro-batch, given its output's
  // gradient (the last stage: an empty tensor, its loss is the output).
  // Stage 0 answers an empty tensor.
  Result<stage_tensor> backward(const stage_tensor& output_gradient);
  // The optimizer step over the accumulated gradients, then zeroes them.
  Status step();
  // Drops the micro-batches in flight (a diverged batch) and the gradients.
  void discard();
  Result<std::string> save_state();

 private:
  struct Impl;
  explicit StageRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A unit's batches cut into micro-batches, in the order train_unit visits
// them (a permutation drawn from the unit's seed, batches of batch_size).
class MicroBatchFeeder {
 public:
  static Result<std::unique_ptr<MicroBatchFeeder>> create(const nlohmann::json& params, const ShapeInfo& shape,
                                                          const datasets::Dataset& partition, uint64_t seed,
                                                          const datasets::Augmentation& augmentation = {});
  ~MicroBatchFeeder();
  MicroBatchFeeder(const MicroBatchFeeder&) = delete;
  MicroBatchFeeder& operator=(const MicroBatchFeeder&) = delete;

  struct Batch {
    std::vector<stage_tensor> inputs;  // per micro-batch, micro_batch = its index
    std::vector<stage_tensor> targets;
    int64_t examples = 0;
  };
  // False when the pass is over.
  bool next(Batch& batch);

 private:
  struct Impl;
  explicit MicroBatchFeeder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cerebro::models
