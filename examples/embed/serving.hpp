#pragma once
// Serving the selected model with plain LibTorch: what the service does with
// a round's best_model.pt.

#include <string>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

// Loads `run_dir`/best_model.pt (torch::jit::load), normalizes `readings` as
// the run's ETL did (the statistics in its data/manifest.json) and returns
// the fraction the model classifies correctly.
cerebro::Result<double> served_accuracy(const std::string& run_dir, cerebro::datasets::Dataset readings);
