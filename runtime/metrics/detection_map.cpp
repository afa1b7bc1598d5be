#include "runtime/metrics/detection_map.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"

namespace cerebro::metrics {

namespace {

constexpr size_t kRecallPoints = 101;

double threshold(size_t t) { return 0.5 + 0.05 * static_cast<double>(t); }

}  // namespace

double intersection_over_union(const Box& a, const Box& b) {
  const double left = std::max(a.x, b.x), top = std::max(a.y, b.y);
  const double right = std::min(static_cast<double>(a.x) + a.width, static_cast<double>(b.x) + b.width);
  const double bottom = std::min(static_cast<double>(a.y) + a.height, static_cast<double>(b.y) + b.height);
  const double overlap = std::max(0.0, right - left) * std::max(0.0, bottom - top);
  const double both = static_cast<double>(a.width) * a.height + static_cast<double>(b.width) * b.height - overlap;
  return both > 0 ? overlap / both : 0.0;
}

DetectionStats::DetectionStats(int64_t classes)
    : detections_(static_cast<size_t>(std::max<int64_t>(0, classes))),
      objects_(static_cast<size_t>(std::max<int64_t>(0, classes)), 0) {}

void DetectionStats::add_image(std::vector<Detection> detections, const std::vector<LabelledBox>& objects) {
  const int64_t k = classes();
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  for (int64_t label = 0; label < k; ++label) {
    std::vector<const Box*> truth;
    for (const LabelledBox& o : objects)
      if (o.label == label) truth.push_back(&o.box);
    objects_[static_cast<size_t>(label)] += static_cast<int64_t>(truth.size());
    std::array<std::vector<bool>, kIouThresholdCount> taken;
    for (auto& t : taken) t.assign(truth.size(), false);
    size_t kept = 0;
    for (const Detection& d : detections) {
      if (d.label != label) continue;
      if (kept++ == kMaxDetectionsPerImage) break;
      Scored scored{d.score, 0};
      for (size_t t = 0; t < kIouThresholdCount; ++t) {
        // The unmatched object it overlaps most, at least the threshold (the first of equals).
        double best = std::min(threshold(t), 1.0 - 1e-10);
        std::optional<size_t> match;
        for (size_t g = 0; g < truth.size(); ++g) {
          if (taken[t][g]) continue;
          const double iou = intersection_over_union(d.box, *truth[g]);
          if (iou < best) continue;
          best = iou;
          match = g;
        }
        if (match) {
          taken[t][*match] = true;
          scored.matched = static_cast<uint16_t>(scored.matched | (1u << t));
        }
      }
      detections_[static_cast<size_t>(label)].push_back(scored);
    }
  }
}

void DetectionStats::merge(const DetectionStats& other) {
  if (other.classes() != classes())
    contract_violation("DetectionStats::merge", fmt::format("{} classes merged into {}", other.classes(), classes()));
  for (size_t c = 0; c < objects_.size(); ++c) {
    objects_[c] += other.objects_[c];
    detections_[c].insert(detections_[c].end(), other.detections_[c].begin(), other.detections_[c].end());
  }
}

double DetectionStats::average_precision(int64_t label, size_t t) const {
  if (label < 0 || label >= classes() || t >= kIouThresholdCount)
    contract_violation("DetectionStats::average_precision",
                       fmt::format("class {} of {}, threshold {} of {}", label, classes(), t, kIouThresholdCount));
  const int64_t truth = objects_[static_cast<size_t>(label)];
  if (truth == 0) return -1.0;
  std::vector<Scored> ranked = detections_[static_cast<size_t>(label)];
  std::stable_sort(ranked.begin(), ranked.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  std::vector<double> recall, precision;
  int64_t hits = 0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    hits += (ranked[i].matched >> t) & 1u;
    recall.push_back(static_cast<double>(hits) / static_cast<double>(truth));
    precision.push_back(static_cast<double>(hits) / static_cast<double>(i + 1));
  }
  // The envelope: the best precision at this recall or beyond.
  for (size_t i = precision.size(); i-- > 1;) precision[i - 1] = std::max(precision[i - 1], precision[i]);
  double sum = 0.0;
  for (size_t r = 0; r < kRecallPoints; ++r) {
    const double wanted = static_cast<double>(r) / static_cast<double>(kRecallPoints - 1);
    const auto at = std::lower_bound(recall.begin(), recall.end(), wanted);
    if (at != recall.end()) sum += precision[static_cast<size_t>(at - recall.begin())];
  }
  return sum / static_cast<double>(kRecallPoints);
}

double DetectionStats::mean_over_classes(size_t first, size_t last) const {
  double sum = 0.0;
  int64_t counted = 0;
  for (int64_t label = 0; label < classes(); ++label) {
    for (size_t t = first; t < last; ++t) {
      const double ap = average_precision(label, t);
      if (ap < 0) continue;
      sum += ap;
      ++counted;
    }
  }
  return counted > 0 ? sum / static_cast<double>(counted) : 0.0;
}

double DetectionStats::map() const { return mean_over_classes(0, kIouThresholdCount); }

double DetectionStats::map50() const { return mean_over_classes(0, 1); }

}  // namespace cerebro::metrics
