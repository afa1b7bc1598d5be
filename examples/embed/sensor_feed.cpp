#include "sensor_feed.hpp"

cerebro::datasets::Dataset SensorFeed::draw(int64_t readings) {
  cerebro::datasets::Dataset d;
  d.sample_shape = {channels};
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (int64_t i = 0; i < readings; ++i) {
    const int64_t activity = static_cast<int64_t>(rng_() % 3);
    // Each activity raises its own pair of channels.
    for (int64_t c = 0; c < channels; ++c) d.features.push_back(noise(rng_) + (c / 2 == activity ? 1.5f : 0.0f));
    d.labels.push_back(activity);
  }
  return d;
}

void SensorFeed::arrive(int64_t readings) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto fresh = draw(readings);
  readings_.sample_shape = fresh.sample_shape;
  readings_.features.insert(readings_.features.end(), fresh.features.begin(), fresh.features.end());
  readings_.labels.insert(readings_.labels.end(), fresh.labels.begin(), fresh.labels.end());
}

cerebro::datasets::Dataset SensorFeed::sample(int64_t readings) {
  std::lock_guard<std::mutex> lock(mutex_);
  return draw(readings);
}

int64_t SensorFeed::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return readings_.size();
}

cerebro::datasets::SourceData SensorFeed::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  cerebro::datasets::SourceData data;
  data.train = readings_;  // the ETL carves the test and validation sets off
  data.class_names = {"idle", "walk", "run"};
  data.inputs = {"sensor feed: " + std::to_string(readings_.size()) + " readings"};
  return data;
}
