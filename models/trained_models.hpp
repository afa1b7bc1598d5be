#pragma once
// The LibTorch side of finishing a run (runtime/run/run_finisher.hpp): the
// test-set score and the TorchScript export of a trained model, for models of
// one input shape.

#include <memory>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/run/run_finisher.hpp"

namespace cerebro::models {

class TorchTrainedModels : public TrainedModels {
 public:
  // `model_info` (models/predict.hpp), when not null, goes inside every exported file.
  TorchTrainedModels(ShapeInfo shape, std::shared_ptr<const datasets::Dataset> test,
                     nlohmann::json model_info = nullptr)
      : shape_(std::move(shape)), test_(std::move(test)), model_info_(std::move(model_info)) {}
  Result<Score> test(const nlohmann::json& params, const std::string& state) override;
  Status export_model(const nlohmann::json& params, const std::string& state, const std::string& path) override;
  Result<Cost> cost(const nlohmann::json& params, const std::string& state) override;
  // The first kExampleImages test images of a captioning or detection run, at most 96 pixels a side.
  Result<nlohmann::json> examples(const nlohmann::json& params, const std::string& state) override;
  static constexpr int64_t kExampleImages = 6;

 private:
  ShapeInfo shape_;
  std::shared_ptr<const datasets::Dataset> test_;
  nlohmann::json model_info_;
};

}  // namespace cerebro::models
