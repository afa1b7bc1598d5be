#include "models/trained_models.hpp"

#include "models/pipeline_runner.hpp"
#include "models/predict.hpp"

namespace cerebro::models {

// A pipeline config's state is its stages' states framed
// together: what is loaded into one model here is the whole model's.
Result<TrainedModels::Score> TorchTrainedModels::test(const nlohmann::json& params, const std::string& state) {
  if (!test_) return Status::failed_precondition("the run has no test set to score the best model on");
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto evaluation = evaluate_state(params, shape_, *whole, *test_);
  if (!evaluation.ok()) return evaluation.status();
  return Score{evaluation->accuracy, evaluation->loss, evaluation->metrics};
}

Status TorchTrainedModels::export_model(const nlohmann::json& params, const std::string& state,
                                        const std::string& path) {
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto exported = models::export_model(params, shape_, *whole, path);
  if (!exported.ok() || model_info_.is_null()) return exported;
  return attach_model_info(path, model_info_);
}

Result<TrainedModels::Cost> TorchTrainedModels::cost(const nlohmann::json& params, const std::string& state) {
  if (!test_) return Status::failed_precondition("the run has no test set to time the model on");
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto measured = model_cost(params, shape_, *whole, *test_);
  if (!measured.ok()) return measured.status();
  return Cost{measured->parameters, measured->inference_ms};
}

}  // namespace cerebro::models
