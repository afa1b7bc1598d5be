#pragma once
// Pipeline stages, the LibTorch level: a config's model split into
// consecutive stages of its chain (Model::chain), each with its own optimizer,
// and the GPipe schedule over them in this thread. The torch-free face is
// models/pipeline_runner.hpp; tests use this one to compare gradients.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/model.hpp"
#include "models/pipeline_runner.hpp"
#include "models/unit_trainer.hpp"

namespace cerebro::models {

class PipelineStage {
 public:
  // `whole` is the model the links were taken from, kept (by the last stage
  // only) when its loss is the model's own (a training template's).
  PipelineStage(int index, int count, std::vector<ChainLink> links, const TrainingParams& training,
                const ShapeInfo& shape, std::unique_ptr<Model> whole);

  int index() const { return index_; }
  int count() const { return count_; }
  bool is_last() const { return index_ + 1 == count_; }
  const std::vector<ChainLink>& links() const { return links_; }
  std::vector<torch::Tensor> parameters() const;
  // Parameters, then buffers, named as in the whole model.
  std::vector<std::pair<std::string, torch::Tensor>> named_state() const;
  void set_training(bool on);
  void set_generator(const torch::Generator& generator);

  // Runs the links on a micro-batch, keeping what its backward needs.
  torch::Tensor forward(int64_t micro, const torch::Tensor& input);
  // The last stage: forward, then the micro-batch's summed loss divided by
  // `batch_examples`, kept for backward. Returns the summed loss.
  double forward_loss(int64_t micro, const torch::Tensor& input, const torch::Tensor& target, int64_t batch_examples);
  // Backpropagates a micro-batch (the last stage from its loss: pass an
  // undefined tensor), accumulating into the parameters' gradients. Returns
  // the gradient of the stage's input (undefined for stage 0).
  torch::Tensor backward(int64_t micro, const torch::Tensor& output_gradient);
  void step();                                      // the optimizer step, then zero gradients
  void discard();                                   // drops micro-batches in flight and the gradients
  torch::Tensor infer(const torch::Tensor& input);  // no gradients, no bookkeeping

  std::string save_state();
  void restore_state(const std::string& bytes);
  Model* whole_model() { return whole_.get(); }

 private:
  int index_, count_;
  std::vector<ChainLink> links_;
  ShapeInfo shape_;
  std::unique_ptr<Model> whole_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  LossFunction template_loss_;
  std::map<int64_t, std::pair<torch::Tensor, torch::Tensor>> in_flight_;  // micro -> (input, output or loss)
};

using Stages = std::vector<std::unique_ptr<PipelineStage>>;

// Builds the config's model (weights from the global generator, as build()
// draws them) and splits its chain into `stages` stages balanced by training
// memory. `only` >= 0 keeps that stage alone (what a stage's process holds).
Stages split_into_stages(const nlohmann::json& params, const ShapeInfo& shape, int stages, int only = -1);

// One GPipe pass over a batch: every micro-batch forward through the stages,
// then backward in reverse order, gradients accumulated (no optimizer step).
// Returns the batch's summed loss.
double gpipe_forward_backward(Stages& stages, const torch::Tensor& x, const torch::Tensor& y, int micro_batches);

// stage_tensor <-> tensor (bytes copied).
stage_tensor to_stage_tensor(int64_t micro, const torch::Tensor& t);
torch::Tensor from_stage_tensor(const stage_tensor& m);

}  // namespace cerebro::models
