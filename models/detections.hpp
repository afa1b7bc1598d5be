#pragma once
// What the detection task feeds a model, what it learns and how its output becomes boxes (docs/TASKS.md
// "Detection"). The model sees the image and returns CenterNet's maps (Zhou et al. 2019, "Objects as
// Points"), float [B, K + 4, h, w] over a grid of h x w cells (a cell is H / h by W / w pixels of the
// image): channels 0 .. K-1 are each class' heatmap logits, where an object's centre cell peaks;
// channels K and K+1 its width and height in cells; K+2 and K+3 where its centre lies in that cell
// (0 .. 1 across). The targets are each image's boxes, float [n, 5 M]: x, y, width, height in pixels and
// the class index, M = the most boxes any image of the set has, padded with class -1.
//
// Inside models/ only (it includes LibTorch).

#include <cstdint>
#include <vector>

#include "datasets/dataset.hpp"
#include "runtime/metrics/detection_map.hpp"
#include "models/model.hpp"

namespace cerebro::models {

// Throws cerebro::Error when the set has no boxes (the ETL's `boxes` and `box_labels` fields).
torch::Tensor box_targets(const datasets::Dataset& d);

// One target row's boxes, the padding left out.
std::vector<metrics::LabelledBox> boxes_of(const torch::Tensor& row);

// The mean over the batch's objects of CenterNet's loss: the penalty-reduced focal loss of the heatmaps
// against a Gaussian around each centre cell, plus L1 of the centre offsets and 0.1 x L1 of the sizes at
// the centre cells. `image_height` and `image_width` are the image's pixels.
torch::Tensor detection_loss(const torch::Tensor& maps, const torch::Tensor& targets, int64_t image_height,
                             int64_t image_width);

// Each image's detections: the heatmaps' peaks (cells no neighbour outscores: CenterNet's suppression),
// the best first, at most metrics::kMaxDetectionsPerImage, then per class non-maximum suppression of boxes
// that overlap a better one by IoU above 0.5.
std::vector<std::vector<metrics::Detection>> decode_detections(const torch::Tensor& maps, int64_t image_height,
                                                               int64_t image_width);

}  // namespace cerebro::models
