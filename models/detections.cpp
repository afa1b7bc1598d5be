#include "models/detections.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "datasets/coco.hpp"

namespace cerebro::models {

namespace {

namespace F = torch::nn::functional;

constexpr double kSizeWeight = 0.1;
constexpr double kSuppressionOverlap = 0.5;
constexpr float kLowestScore = 1e-3f;

}  // namespace

torch::Tensor box_targets(const datasets::Dataset& d) {
  const auto* boxes = d.field(datasets::kCocoBoxesField);
  const auto* labels = d.field(datasets::kCocoBoxLabelsField);
  if (!boxes || !labels || boxes->width != 4)
    throw Error("detection needs the prepared data's boxes (source = \"coco\" with an instances file)",
                StatusCode::failed_precondition);
  int64_t most = 1;
  for (int64_t i = 0; i < d.size(); ++i) most = std::max(most, boxes->items_of(i));
  auto targets = torch::full({d.size(), 5 * most}, -1.0f, torch::kFloat32);
  auto* row = targets.data_ptr<float>();
  for (int64_t i = 0; i < d.size(); ++i, row += 5 * most) {
    for (int64_t b = boxes->offsets[static_cast<size_t>(i)], k = 0; b < boxes->offsets[static_cast<size_t>(i) + 1];
         ++b, ++k) {
      for (int64_t c = 0; c < 4; ++c) row[5 * k + c] = boxes->floats[static_cast<size_t>(4 * b + c)];
      row[5 * k + 4] = static_cast<float>(labels->ints[static_cast<size_t>(b)]);
    }
  }
  return targets;
}

std::vector<metrics::LabelledBox> boxes_of(const torch::Tensor& row) {
  auto values = row.to(torch::kFloat32).contiguous();
  const float* v = values.data_ptr<float>();
  std::vector<metrics::LabelledBox> out;
  for (int64_t k = 0; 5 * k + 4 < values.numel(); ++k) {
    if (v[5 * k + 4] < 0) continue;
    out.push_back({{v[5 * k], v[5 * k + 1], v[5 * k + 2], v[5 * k + 3]}, static_cast<int64_t>(v[5 * k + 4])});
  }
  return out;
}

torch::Tensor detection_loss(const torch::Tensor& maps, const torch::Tensor& targets, int64_t image_height,
                             int64_t image_width) {
  const int64_t batch = maps.size(0), classes = maps.size(1) - 4, h = maps.size(2), w = maps.size(3);
  const double cell_h = static_cast<double>(image_height) / static_cast<double>(h);
  const double cell_w = static_cast<double>(image_width) / static_cast<double>(w);
  auto t = targets.to(torch::kFloat32).reshape({batch, -1, 5});
  auto label = t.select(2, 4);
  auto real = label.ge(0).to(torch::kFloat32);  // [B, M]
  auto width = t.select(2, 2) / cell_w, height = t.select(2, 3) / cell_h;
  auto cx = t.select(2, 0) / cell_w + width / 2, cy = t.select(2, 1) / cell_h + height / 2;
  auto column = cx.floor().clamp(0, static_cast<double>(w - 1)), row = cy.floor().clamp(0, static_cast<double>(h - 1));

  // The heatmaps' targets: per class the largest Gaussian of its objects, 1 at each centre cell exactly.
  auto sigma = (torch::minimum(width, height) / 6).clamp_min(0.5);
  auto gx = torch::arange(w, torch::kFloat32).view({1, 1, 1, w}),
       gy = torch::arange(h, torch::kFloat32).view({1, 1, h, 1});
  auto distance = (gx - column.view({batch, -1, 1, 1})).square() + (gy - row.view({batch, -1, 1, 1})).square();
  auto gaussian = torch::exp(-distance / (2 * sigma.square()).view({batch, -1, 1, 1})) * real.view({batch, -1, 1, 1});
  auto of_class = F::one_hot(label.clamp_min(0).to(torch::kInt64), classes).to(torch::kFloat32) * real.unsqueeze(2);
  auto heat = (gaussian.unsqueeze(2) * of_class.view({batch, -1, classes, 1, 1})).amax(1);  // [B, K, h, w]

  auto p = torch::sigmoid(maps.slice(1, 0, classes)).clamp(1e-4, 1 - 1e-4);
  auto centre = heat.eq(1.0f).to(torch::kFloat32);
  auto focal =
      -(torch::log(p) * (1 - p).square() * centre + torch::log(1 - p) * p.square() * (1 - heat).pow(4) * (1 - centre))
           .sum();

  auto cell = (row * static_cast<double>(w) + column).to(torch::kInt64);  // [B, M]
  auto at_centres = maps.slice(1, classes).flatten(2).gather(2, cell.unsqueeze(1).expand({batch, 4, cell.size(1)}));
  auto size_error = (at_centres.slice(1, 0, 2) - torch::stack({width, height}, 1)).abs().sum(1);
  auto offset_error = (at_centres.slice(1, 2, 4) - torch::stack({cx - column, cy - row}, 1)).abs().sum(1);
  auto regression = ((kSizeWeight * size_error + offset_error) * real).sum();
  return (focal + regression) / real.sum().clamp_min(1);
}

std::vector<std::vector<metrics::Detection>> decode_detections(const torch::Tensor& maps, int64_t image_height,
                                                               int64_t image_width) {
  torch::NoGradGuard no_grad;
  const int64_t batch = maps.size(0), classes = maps.size(1) - 4, h = maps.size(2), w = maps.size(3);
  const float cell_h = static_cast<float>(image_height) / static_cast<float>(h);
  const float cell_w = static_cast<float>(image_width) / static_cast<float>(w);
  auto heat = torch::sigmoid(maps.slice(1, 0, classes).to(torch::kFloat32));
  auto peaks = heat * heat.eq(F::max_pool2d(heat, F::MaxPool2dFuncOptions(3).stride(1).padding(1)));
  const int64_t keep = std::min<int64_t>(static_cast<int64_t>(metrics::kMaxDetectionsPerImage), classes * h * w);
  auto [scores, where] = peaks.flatten(1).topk(keep, 1);
  auto box_maps = maps.slice(1, classes).to(torch::kFloat32).contiguous();
  auto score_of = scores.accessor<float, 2>();
  auto index_of = where.accessor<int64_t, 2>();
  const float* box_values = box_maps.data_ptr<float>();
  std::vector<std::vector<metrics::Detection>> out(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<metrics::Detection> found;
    for (int64_t k = 0; k < keep; ++k) {
      const float score = score_of[b][k];
      if (score < kLowestScore) break;  // sorted: the rest score lower
      const int64_t index = index_of[b][k];
      const int64_t label = index / (h * w), cell = index % (h * w), i = cell / w, j = cell % w;
      auto value = [&](int64_t channel) { return box_values[((b * 4 + channel) * h + i) * w + j]; };
      const float width = std::max(0.0f, value(0)) * cell_w, height = std::max(0.0f, value(1)) * cell_h;
      const float cx = (static_cast<float>(j) + value(2)) * cell_w, cy = (static_cast<float>(i) + value(3)) * cell_h;
      metrics::Detection d{{cx - width / 2, cy - height / 2, width, height}, label, score};
      const bool suppressed = std::any_of(found.begin(), found.end(), [&](const metrics::Detection& better) {
        return better.label == d.label && metrics::intersection_over_union(better.box, d.box) > kSuppressionOverlap;
      });
      if (!suppressed) found.push_back(d);
    }
    out[static_cast<size_t>(b)] = std::move(found);
  }
  return out;
}

}  // namespace cerebro::models
