#pragma once
// Typed, validated access to one config's hyper-parameters (a JSON object).
// Torch-free so the CLI can validate a whole grid before anything is written.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro::models {

// A hyper-parameter of the wrong type or value: a spec error, as opposed to a
// model that does not fit the data (which fails only its config).
class ParamError : public Error {
 public:
  explicit ParamError(const std::string& message) : Error(message, StatusCode::invalid_argument) {}
};

// Reads keys of a params object; every read key is remembered so that
// unknown keys can be reported afterwards. Wrong types throw cerebro::Error
// with a message naming the key and what was expected.
class ParamReader {
 public:
  explicit ParamReader(const nlohmann::json& params);

  double number(const std::string& key, double fallback);
  double positive_number(const std::string& key, double fallback);
  int64_t integer(const std::string& key, int64_t fallback, int64_t min_value);
  bool boolean(const std::string& key, bool fallback);
  std::string string(const std::string& key, const std::string& fallback);
  std::vector<int64_t> int_list(const std::string& key, std::vector<int64_t> fallback, int64_t min_value);
  double fraction(const std::string& key, double fallback);  // in [0, 1)

  // Keys present in params but never read.
  std::vector<std::string> unread_keys() const;

 private:
  const nlohmann::json* find(const std::string& key);
  const nlohmann::json& params_;
  std::set<std::string> read_;
};

// The `optimizer` hyper-parameter; its name ("sgd", "adam", "adamw") is read
// only by TrainingParams::read.
enum class OptimizerKind { sgd, adam, adamw };
std::string to_string(OptimizerKind kind);
std::optional<OptimizerKind> parse_optimizer_kind(const std::string& name);

// The `parallelism` hyper-parameter: "auto" trains a config whole
// unless its training state exceeds a worker's memory; "pipeline" splits it
// into stages (runtime/scheduling/pipeline_plan.hpp, models/pipeline.hpp).
enum class ModelParallelism { automatic, pipeline };
std::string to_string(ModelParallelism kind);  // "auto", "pipeline"
std::optional<ModelParallelism> parse_model_parallelism(const std::string& name);

// The hyper-parameters every config has, whatever its model.
struct TrainingParams {
  std::string model;
  double lr = 1e-3;
  int64_t batch_size = 64;
  OptimizerKind optimizer = OptimizerKind::adam;
  double weight_decay = 0.0;  // adamw defaults to 0.01, as in torch
  double momentum = 0.0;      // sgd only
  bool nesterov = false;      // sgd only
  ModelParallelism parallelism = ModelParallelism::automatic;
  int stages = 0;         // pipeline only: 0 = as few as fit
  int micro_batches = 4;  // pipeline only: GPipe micro-batches per batch

  static TrainingParams read(ParamReader& reader);
};

}  // namespace cerebro::models
