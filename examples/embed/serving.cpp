#include "serving.hpp"

#include <filesystem>

#include <torch/script.h>

#include "datasets/manifest.hpp"

cerebro::Result<double> served_accuracy(const std::string& run_dir, cerebro::datasets::Dataset readings) {
  const auto dir = std::filesystem::path(run_dir);
  auto manifest = cerebro::datasets::read_manifest((dir / "data").string());
  if (!manifest.ok()) return manifest.status();
  if (auto applied = cerebro::datasets::apply_normalization(readings, manifest->normalization); !applied.ok())
    return applied;
  try {
    auto model = torch::jit::load((dir / "best_model.pt").string());
    model.eval();
    torch::NoGradGuard no_grad;
    std::vector<int64_t> shape = {readings.size()};
    shape.insert(shape.end(), readings.sample_shape.begin(), readings.sample_shape.end());
    auto x = torch::from_blob(readings.features.data(), shape, torch::kFloat32);
    auto y = torch::from_blob(readings.labels.data(), {readings.size()}, torch::kInt64);
    auto predicted = model.forward({x}).toTensor().argmax(1);
    return predicted.eq(y).to(torch::kFloat64).mean().item<double>();
  } catch (const c10::Error& e) {
    return cerebro::Status::io_error(run_dir + "/best_model.pt: " + e.what_without_backtrace());
  }
}
