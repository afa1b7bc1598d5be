#pragma once
// A stand-in for the service's data: labelled sensor readings that keep
// arriving. Three activities (idle, walk, run), eight channels per reading.

#include <cstdint>
#include <mutex>
#include <random>

#include "datasets/dataset_source.hpp"

class SensorFeed {
 public:
  static constexpr int64_t channels = 8;

  explicit SensorFeed(uint64_t seed) : rng_(seed) {}

  // `readings` new labelled readings arrive.
  void arrive(int64_t readings);
  // `readings` labelled readings that are not kept: traffic to serve.
  cerebro::datasets::Dataset sample(int64_t readings);
  int64_t size() const;

  // Everything that has arrived so far, as the dataset source cerebro's ETL
  // reads (the loader registered with register_dataset_source).
  cerebro::datasets::SourceData snapshot() const;

 private:
  mutable std::mutex mutex_;                          // arrivals may race with an experiment's ETL
  cerebro::datasets::Dataset draw(int64_t readings);  // with mutex_ held

  std::mt19937_64 rng_;
  cerebro::datasets::Dataset readings_;
};
