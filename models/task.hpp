#pragma once
// The tasks' built-in losses and metrics, and a training template's own in
// their place: what one unit minimises and what a validation reports. The
// metric arithmetic runs on counts accumulated over batches, so a validation
// pass in batches gives the same numbers as one pass over everything.
//
//   classification  cross-entropy; accuracy, macro_f1 (the mean F1 of the
//                   classes that occur in the targets or the predictions),
//                   top5_accuracy (more than 5 classes)
//   regression      MSE on the standardized targets; mse, mae (in the
//                   targets' units), r2 (the mean over targets of
//                   1 - SSE/SST; a constant target scores 1 if predicted
//                   exactly, else 0, as scikit-learn does)
//   multilabel      binary cross-entropy on logits; subset_accuracy (every
//                   label right), micro_f1 (over all labels; a label is
//                   predicted when its logit is > 0)
//   language_model  next-token cross-entropy of positions 1 .. T-1 from the logits
//                   [B, T, vocabulary] before them, pad (id 0) left out: each
//                   batch's mean over its tokens; token_accuracy, perplexity
//                   (exp of the mean over every token of the set)
//   captioning      the same next-token loss of a caption given its image
//                   (models/captions.hpp); token_accuracy, and bleu4: corpus
//                   BLEU-4 of greedy captions against every caption of an
//                   image (the evaluation decodes them: add_captions)
//   detection       CenterNet's loss over the batch's objects
//                   (models/detections.hpp); map and map50 of the decoded
//                   boxes (runtime/metrics/detection_map.hpp)
// A template's metrics are averaged over the examples (each batch's value
// weighted by its size).

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/metrics/bleu.hpp"
#include "runtime/metrics/detection_map.hpp"
#include "runtime/metrics/token_stats.hpp"

namespace cerebro::models {

// A borrowed view of a dataset's targets: int64 [n] class indices, float
// [n, width] for regression and multilabel, and for a dataset with neither
// labels nor targets (token windows) its features: a language model's target
// is its input, one token on.
torch::Tensor targets_of(const datasets::Dataset& d);

// What a pass over `d` computes its loss against: targets_of(d), or for captioning each image's caption
// drawn from `seed` (models/captions.hpp caption_targets), for detection its boxes (models/detections.hpp
// box_targets).
torch::Tensor task_targets(const datasets::Dataset& d, const ShapeInfo& shape, uint64_t seed);

// A batch's model input from its features and its rows of task_targets: the features, or for captioning
// each image's values followed by its caption's ids.
torch::Tensor task_input(const ShapeInfo& shape, const torch::Tensor& features, const torch::Tensor& targets);

// The first `rows` rows of `d` as (model input, targets): a pilot batch.
std::pair<torch::Tensor, torch::Tensor> first_rows(const datasets::Dataset& d, const ShapeInfo& shape, int64_t rows);

// Rows per validation batch: kEvaluationBatch, fewer for a language model
// (whose logits per row are window x vocabulary floats).
int64_t evaluation_batch(const ShapeInfo& shape);

// Throws cerebro::Error naming both shapes when a built-in task's output for
// `rows` examples is not [rows, classes] ([rows, window, vocabulary] for a
// language model).
void check_output_shape(const ShapeInfo& shape, const torch::Tensor& out, int64_t rows);

// What one batch costs: the template's loss when the model has one, else the
// task's. Throws cerebro::Error naming `loss` when a template's loss is not a
// scalar.
class Objective {
 public:
  Objective(const ShapeInfo& shape, Model& model);
  // With a template's loss given directly (empty: the task's); a pipeline's last stage.
  Objective(const ShapeInfo& shape, LossFunction template_loss);
  // The mean loss over the batch (a scalar to backpropagate).
  torch::Tensor mean_loss(const torch::Tensor& output, const torch::Tensor& target) const;
  // The summed loss over the batch (for a validation's mean over examples).
  double summed_loss(const torch::Tensor& output, const torch::Tensor& target) const;
  // The same as a tensor to backpropagate (the gang trainer sums gradients over its ranks' shares).
  torch::Tensor summed_loss_tensor(const torch::Tensor& output, const torch::Tensor& target) const;

 private:
  ShapeInfo shape_;
  LossFunction template_loss_;
};

// A validation's metrics over its batches.
class MetricAccumulator {
 public:
  // With `template_metrics` set, those replace the task's built-ins.
  explicit MetricAccumulator(const ShapeInfo& shape, MetricsFunction template_metrics = {});
  void add(const torch::Tensor& output, const torch::Tensor& target);
  // Captioning: the BLEU statistics of greedy captions (models/captions.hpp caption_bleu).
  void add_captions(const metrics::BleuStats& bleu);
  // The named metrics of everything added; classification's accuracy also in *accuracy.
  std::map<std::string, double> result(double* accuracy = nullptr) const;

 private:
  ShapeInfo shape_;
  MetricsFunction template_metrics_;
  int64_t examples_ = 0;
  // classification
  int64_t correct_ = 0, top5_correct_ = 0;
  std::vector<int64_t> true_positive_, false_positive_, false_negative_;
  // regression, per target (in the targets' units)
  std::vector<double> sum_y_, sum_y2_, sum_squared_error_, sum_abs_error_;
  // multilabel
  int64_t rows_all_right_ = 0, label_tp_ = 0, label_fp_ = 0, label_fn_ = 0;
  // language model
  metrics::TokenStats tokens_;
  metrics::BleuStats bleu_;
  // detection
  metrics::DetectionStats detections_;
  // template metrics: example-weighted sums
  std::map<std::string, double> template_sums_;
};

}  // namespace cerebro::models
