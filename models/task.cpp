#include "models/task.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/captions.hpp"
#include "models/detections.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

using datasets::TaskKind;

torch::Tensor targets_of(const datasets::Dataset& d) {
  if (d.has_targets())
    return torch::from_blob(const_cast<float*>(d.targets.data()), {d.size(), d.target_width}, torch::kFloat32);
  if (d.labels.empty() && d.size() > 0 && d.sample_numel() > 0) {
    std::vector<int64_t> shape{d.size()};
    shape.insert(shape.end(), d.sample_shape.begin(), d.sample_shape.end());
    return torch::from_blob(const_cast<float*>(d.feature_data()), shape, torch::kFloat32);
  }
  return torch::from_blob(const_cast<int64_t*>(d.labels.data()), {d.size()}, torch::kInt64);
}

namespace {

bool is_sequence_task(TaskKind task) { return task == TaskKind::language_model || task == TaskKind::captioning; }

}  // namespace

torch::Tensor task_targets(const datasets::Dataset& d, const ShapeInfo& shape, uint64_t seed) {
  if (shape.task == TaskKind::captioning) return caption_targets(d, seed);
  if (shape.task == TaskKind::detection) return box_targets(d);
  return targets_of(d);
}

torch::Tensor task_input(const ShapeInfo& shape, const torch::Tensor& features, const torch::Tensor& targets) {
  if (shape.task != TaskKind::captioning) return features;
  return torch::cat({features.reshape({features.size(0), -1}), targets.to(torch::kFloat32)}, 1);
}

std::pair<torch::Tensor, torch::Tensor> first_rows(const datasets::Dataset& d, const ShapeInfo& shape, int64_t rows) {
  if (shape.task != TaskKind::captioning && shape.task != TaskKind::detection)
    return {detail::features_of(d).slice(0, 0, rows), targets_of(d).slice(0, 0, rows)};
  std::vector<int64_t> first(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) first[static_cast<size_t>(i)] = i;
  const auto head = datasets::gather(d, first, 0, rows);  // the targets of a few rows, not of the whole set
  auto targets = task_targets(head, shape, 0);
  // task_input makes its own tensor for captioning; for detection it is the head's images: a copy outlives it.
  auto input = task_input(shape, detail::features_of(head), targets);
  return {shape.task == TaskKind::captioning ? input : input.clone(), targets};
}

int64_t evaluation_batch(const ShapeInfo& shape) {
  if (!is_sequence_task(shape.task)) return detail::kEvaluationBatch;
  // A batch's logits are [rows, tokens, vocabulary] floats: keep them near 16 MiB. A caption's tokens are
  // the data's, not the shape's: count a generous 64.
  const int64_t tokens =
      shape.task == TaskKind::captioning ? 64 : (shape.sample_shape.empty() ? 1 : shape.sample_shape.back());
  const int64_t per_row = std::max<int64_t>(1, tokens * std::max<int64_t>(1, shape.num_classes));
  return std::clamp<int64_t>((int64_t{1} << 22) / per_row, 1, detail::kEvaluationBatch);
}

void check_output_shape(const ShapeInfo& shape, const torch::Tensor& out, int64_t rows) {
  if (shape.task == TaskKind::language_model) {
    const int64_t window = shape.sample_shape.empty() ? 0 : shape.sample_shape.back();
    if (out.dim() != 3 || out.size(0) != rows || out.size(1) != window || out.size(2) != shape.num_classes)
      throw Error(fmt::format("the model's output has shape [{}], expected [{}, {}, {}] (batch, tokens, vocabulary)",
                              fmt::join(out.sizes(), ", "), rows, window, shape.num_classes));
    return;
  }
  if (shape.task == TaskKind::detection) {
    if (out.dim() != 4 || out.size(0) != rows || out.size(1) != shape.num_classes + 4)
      throw Error(fmt::format(
          "the model's output has shape [{}], expected [{}, {}, cells down, cells across] (batch, each class' "
          "heatmap then the box's width, height and centre offset; models/detections.hpp)",
          fmt::join(out.sizes(), ", "), rows, shape.num_classes + 4));
    return;
  }
  if (shape.task == TaskKind::captioning) {
    if (out.dim() != 3 || out.size(0) != rows || out.size(2) != shape.num_classes)
      throw Error(
          fmt::format("the model's output has shape [{}], expected [{}, tokens, {}] (batch, tokens, vocabulary)",
                      fmt::join(out.sizes(), ", "), rows, shape.num_classes));
    return;
  }
  if (out.dim() != 2 || out.size(0) != rows || out.size(1) != shape.num_classes)
    throw Error(fmt::format("the model's output has shape [{}], expected [{}, {}] (batch, classes)",
                            fmt::join(out.sizes(), ", "), rows, shape.num_classes));
}

namespace {

namespace F = torch::nn::functional;

// A language model's next-token predictions: the logits of positions 0 .. T-2 against the ids of
// positions 1 .. T-1, pad (id 0) left out. Returns (logits [N, V], targets [N]).
std::pair<torch::Tensor, torch::Tensor> next_token_pairs(const torch::Tensor& output, const torch::Tensor& target) {
  const int64_t tokens = output.size(1), vocabulary = output.size(2);
  auto ids = target.to(torch::kInt64);
  return {output.slice(1, 0, tokens - 1).reshape({-1, vocabulary}), ids.slice(1, 1, tokens).reshape({-1})};
}

// The summed cross-entropy of the non-pad next tokens and their count.
std::pair<torch::Tensor, int64_t> next_token_loss(const torch::Tensor& output, const torch::Tensor& target) {
  auto [logits, next] = next_token_pairs(output, target);
  auto loss = F::cross_entropy(logits, next, F::CrossEntropyFuncOptions().ignore_index(0).reduction(torch::kSum));
  return {loss, next.ne(0).sum().item<int64_t>()};
}

// `sum`: summed over the batch's examples (each example's loss the mean over its targets), for a
// validation's mean over examples; else the mean to backpropagate.
torch::Tensor builtin_loss(const ShapeInfo& shape, const torch::Tensor& output, const torch::Tensor& target, bool sum) {
  const TaskKind task = shape.task;
  using Reduction = torch::nn::functional::CrossEntropyFuncOptions::reduction_t;
  const Reduction reduction = sum ? Reduction(torch::kSum) : Reduction(torch::kMean);
  if (task == TaskKind::classification)
    return F::cross_entropy(output, target, F::CrossEntropyFuncOptions().reduction(reduction));
  if (is_sequence_task(task)) {
    // The mean over the batch's predicted tokens; summed: that mean counted once per example, so a
    // validation's val_loss is the batches' token means weighted by their examples.
    auto [summed, tokens] = next_token_loss(output, target);
    auto mean = summed / static_cast<double>(std::max<int64_t>(1, tokens));
    return sum ? mean * static_cast<double>(output.size(0)) : mean;
  }
  if (task == TaskKind::detection) {
    // A mean over the batch's objects as well, counted once per example when summed.
    auto mean = detection_loss(output, target, shape.sample_shape.at(1), shape.sample_shape.at(2));
    return sum ? mean * static_cast<double>(output.size(0)) : mean;
  }
  torch::Tensor loss;
  if (task == TaskKind::regression) {
    loss = F::mse_loss(output, target,
                       F::MSELossFuncOptions().reduction(sum ? F::MSELossFuncOptions::reduction_t(torch::kSum)
                                                             : F::MSELossFuncOptions::reduction_t(torch::kMean)));
  } else {
    loss = F::binary_cross_entropy_with_logits(
        output, target,
        F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(
            sum ? F::BinaryCrossEntropyWithLogitsFuncOptions::reduction_t(torch::kSum)
                : F::BinaryCrossEntropyWithLogitsFuncOptions::reduction_t(torch::kMean)));
  }
  return sum ? loss / static_cast<double>(std::max<int64_t>(1, target.size(1))) : loss;
}

std::string shape_text(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

}  // namespace

Objective::Objective(const ShapeInfo& shape, Model& model) : shape_(shape), template_loss_(model.template_loss()) {}
Objective::Objective(const ShapeInfo& shape, LossFunction template_loss)
    : shape_(shape), template_loss_(std::move(template_loss)) {}

torch::Tensor Objective::mean_loss(const torch::Tensor& output, const torch::Tensor& target) const {
  if (!template_loss_) return builtin_loss(shape_, output, target, false);
  auto loss = template_loss_(output, target);
  if (loss.numel() != 1)
    throw Error(
        fmt::format("the template's loss(output, target) must return a scalar Tensor, got shape {}", shape_text(loss)));
  return loss.reshape({});
}

double Objective::summed_loss(const torch::Tensor& output, const torch::Tensor& target) const {
  // The built-in sum (not mean * n) keeps a classification's val_loss what it always was.
  if (!template_loss_) return builtin_loss(shape_, output, target, true).item<double>();
  return mean_loss(output, target).item<double>() * static_cast<double>(output.size(0));
}

torch::Tensor Objective::summed_loss_tensor(const torch::Tensor& output, const torch::Tensor& target) const {
  if (!template_loss_) return builtin_loss(shape_, output, target, true);
  return mean_loss(output, target) * static_cast<double>(output.size(0));
}

MetricAccumulator::MetricAccumulator(const ShapeInfo& shape, MetricsFunction template_metrics)
    : shape_(shape), template_metrics_(std::move(template_metrics)), detections_(shape.num_classes) {
  const auto width = static_cast<size_t>(std::max<int64_t>(0, shape.num_classes));
  if (shape.task == TaskKind::classification) {
    true_positive_.assign(width, 0);
    false_positive_.assign(width, 0);
    false_negative_.assign(width, 0);
  } else if (shape.task == TaskKind::regression) {
    sum_y_.assign(width, 0.0);
    sum_y2_.assign(width, 0.0);
    sum_squared_error_.assign(width, 0.0);
    sum_abs_error_.assign(width, 0.0);
  }
}

void MetricAccumulator::add(const torch::Tensor& output, const torch::Tensor& target) {
  torch::NoGradGuard no_grad;
  const int64_t n = output.size(0);
  examples_ += n;
  if (template_metrics_) {
    for (const auto& [name, value] : template_metrics_(output, target)) {
      if (value.numel() != 1)
        throw Error(
            fmt::format("the template's metrics(output, target) must map each name to a scalar Tensor; "
                        "\"{}\" has shape {}",
                        name, shape_text(value)));
      template_sums_[name] += value.item<double>() * static_cast<double>(n);
    }
    return;
  }
  const int64_t width = shape_.num_classes;
  if (shape_.task == TaskKind::classification) {
    auto predicted = output.argmax(1);
    correct_ += predicted.eq(target).sum().item<int64_t>();
    auto hits = torch::bincount(target.masked_select(predicted.eq(target)), {}, width);
    auto predicted_counts = torch::bincount(predicted, {}, width);
    auto target_counts = torch::bincount(target, {}, width);
    for (int64_t c = 0; c < width; ++c) {
      const int64_t tp = hits[c].item<int64_t>();
      true_positive_[c] += tp;
      false_positive_[c] += predicted_counts[c].item<int64_t>() - tp;
      false_negative_[c] += target_counts[c].item<int64_t>() - tp;
    }
    if (width > 5) top5_correct_ += std::get<1>(output.topk(5, 1)).eq(target.unsqueeze(1)).any(1).sum().item<int64_t>();
  } else if (shape_.task == TaskKind::detection) {
    const auto found = decode_detections(output, shape_.sample_shape.at(1), shape_.sample_shape.at(2));
    for (int64_t i = 0; i < output.size(0); ++i)
      detections_.add_image(found[static_cast<size_t>(i)], boxes_of(target[i]));
  } else if (is_sequence_task(shape_.task)) {
    auto [logits, next] = next_token_pairs(output, target);
    auto real = next.ne(0);
    auto nll = F::cross_entropy(logits, next, F::CrossEntropyFuncOptions().ignore_index(0).reduction(torch::kSum));
    tokens_.add(real.sum().item<int64_t>(), logits.argmax(1).eq(next).logical_and(real).sum().item<int64_t>(),
                nll.item<double>());
  } else if (shape_.task == TaskKind::regression) {
    auto scale = torch::ones({width}, torch::kFloat64);
    for (int64_t k = 0; k < width && k < static_cast<int64_t>(shape_.target_stddev.size()); ++k)
      if (shape_.target_stddev[static_cast<size_t>(k)] > 0) scale[k] = shape_.target_stddev[static_cast<size_t>(k)];
    auto y = target.to(torch::kFloat64) * scale;
    auto error = (output.to(torch::kFloat64) - target.to(torch::kFloat64)) * scale;
    auto sum_y = y.sum(0), sum_y2 = (y * y).sum(0), sse = (error * error).sum(0), sae = error.abs().sum(0);
    for (int64_t k = 0; k < width; ++k) {
      sum_y_[k] += sum_y[k].item<double>();
      sum_y2_[k] += sum_y2[k].item<double>();
      sum_squared_error_[k] += sse[k].item<double>();
      sum_abs_error_[k] += sae[k].item<double>();
    }
  } else {
    auto predicted = output.gt(0);
    auto truth = target.gt(0.5);
    rows_all_right_ += predicted.eq(truth).all(1).sum().item<int64_t>();
    label_tp_ += (predicted & truth).sum().item<int64_t>();
    label_fp_ += (predicted & ~truth).sum().item<int64_t>();
    label_fn_ += (~predicted & truth).sum().item<int64_t>();
  }
}

void MetricAccumulator::add_captions(const metrics::BleuStats& bleu) { bleu_.merge(bleu); }

std::map<std::string, double> MetricAccumulator::result(double* accuracy) const {
  std::map<std::string, double> out;
  if (accuracy) *accuracy = 0;
  if (examples_ == 0) return out;
  const double n = static_cast<double>(examples_);
  if (template_metrics_) {
    for (const auto& [name, sum] : template_sums_) out[name] = sum / n;
    return out;
  }
  if (shape_.task == TaskKind::classification) {
    out["accuracy"] = static_cast<double>(correct_) / n;
    if (accuracy) *accuracy = out["accuracy"];
    double f1_sum = 0;
    int64_t classes = 0;
    for (size_t c = 0; c < true_positive_.size(); ++c) {
      const int64_t denominator = 2 * true_positive_[c] + false_positive_[c] + false_negative_[c];
      if (denominator == 0) continue;  // neither a target nor a prediction anywhere
      f1_sum += 2.0 * static_cast<double>(true_positive_[c]) / static_cast<double>(denominator);
      ++classes;
    }
    out["macro_f1"] = classes ? f1_sum / static_cast<double>(classes) : 0.0;
    if (shape_.num_classes > 5) out["top5_accuracy"] = static_cast<double>(top5_correct_) / n;
  } else if (shape_.task == TaskKind::language_model) {
    out["token_accuracy"] = tokens_.accuracy();
    out["perplexity"] = tokens_.perplexity();
  } else if (shape_.task == TaskKind::detection) {
    out["map"] = detections_.map();
    out["map50"] = detections_.map50();
  } else if (shape_.task == TaskKind::captioning) {
    out["token_accuracy"] = tokens_.accuracy();
    if (bleu_.sentences > 0) out["bleu4"] = bleu_.bleu4();
  } else if (shape_.task == TaskKind::regression) {
    double sse = 0, sae = 0, r2_sum = 0;
    for (size_t k = 0; k < sum_y_.size(); ++k) {
      sse += sum_squared_error_[k];
      sae += sum_abs_error_[k];
      const double sst = sum_y2_[k] - sum_y_[k] * sum_y_[k] / n;
      // Relative to the scale of the targets: a constant target's rounding residue is not variance.
      if (sst > 1e-12 * std::max(1.0, sum_y2_[k])) {
        r2_sum += 1.0 - sum_squared_error_[k] / sst;
      } else {
        r2_sum += sum_squared_error_[k] == 0 ? 1.0 : 0.0;
      }
    }
    const double values = n * static_cast<double>(sum_y_.size());
    out["mse"] = values > 0 ? sse / values : 0.0;
    out["mae"] = values > 0 ? sae / values : 0.0;
    out["r2"] = sum_y_.empty() ? 0.0 : r2_sum / static_cast<double>(sum_y_.size());
  } else {
    out["subset_accuracy"] = static_cast<double>(rows_all_right_) / n;
    const int64_t denominator = 2 * label_tp_ + label_fp_ + label_fn_;
    out["micro_f1"] = denominator ? 2.0 * static_cast<double>(label_tp_) / static_cast<double>(denominator) : 0.0;
  }
  return out;
}

}  // namespace cerebro::models
