#pragma once
// Detection scores as COCO's evaluation computes them for boxes: per image and class the detections, best
// score first (at most 100), each matched greedily to the unmatched object of the same class it overlaps
// most, when that intersection over union reaches the threshold; then per class and threshold the
// precision envelope read at 101 recall points 0, 0.01, ..., 1. `map` averages over the classes that have
// objects and the ten thresholds 0.50, 0.55, ..., 0.95; `map50` is the average at 0.50 alone. A class with
// objects and no detection scores 0; a class without objects does not count.
//
// The statistics are each class' scored detections (with whether they matched, per threshold) and object
// count: shares of a validation set merge into the whole set's statistics.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cerebro::metrics {

struct Box {
  float x = 0, y = 0, width = 0, height = 0;  // top-left corner and size, in pixels
};

struct Detection {
  Box box;
  int64_t label = 0;
  float score = 0;
};

struct LabelledBox {
  Box box;
  int64_t label = 0;
};

inline constexpr size_t kIouThresholdCount = 10;  // 0.50, 0.55, ..., 0.95
inline constexpr size_t kMaxDetectionsPerImage = 100;

double intersection_over_union(const Box& a, const Box& b);

class DetectionStats {
 public:
  explicit DetectionStats(int64_t classes);

  // One image: labels outside [0, classes) are ignored.
  void add_image(std::vector<Detection> detections, const std::vector<LabelledBox>& objects);
  // Another share's statistics; the class counts must be equal (a contract).
  void merge(const DetectionStats& other);

  double map() const;
  double map50() const;
  // AP of one class at threshold 0.50 + 0.05 * t; negative when the class has no objects.
  double average_precision(int64_t label, size_t t) const;
  int64_t classes() const { return static_cast<int64_t>(objects_.size()); }

 private:
  struct Scored {
    float score = 0;
    uint16_t matched = 0;  // bit t: a true positive at threshold t
  };
  double mean_over_classes(size_t first, size_t last) const;

  std::vector<std::vector<Scored>> detections_;  // per class
  std::vector<int64_t> objects_;                 // per class
};

}  // namespace cerebro::metrics
