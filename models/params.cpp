#include "models/params.hpp"

#include <array>

#include <fmt/format.h>

#include "runtime/base/enum_names.hpp"

namespace cerebro::models {

namespace {
std::string shown(const nlohmann::json& v) { return v.dump(); }
}  // namespace

ParamReader::ParamReader(const nlohmann::json& params) : params_(params) {
  if (!params_.is_object()) throw ParamError("hyper-parameters must be a table of key = value");
}

const nlohmann::json* ParamReader::find(const std::string& key) {
  read_.insert(key);
  auto it = params_.find(key);
  return it == params_.end() ? nullptr : &*it;
}

double ParamReader::number(const std::string& key, double fallback) {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_number()) throw ParamError(fmt::format("{} must be a number, got {}", key, shown(*v)));
  return v->get<double>();
}

double ParamReader::positive_number(const std::string& key, double fallback) {
  double x = number(key, fallback);
  if (!(x > 0)) throw ParamError(fmt::format("{} must be > 0, got {}", key, x));
  return x;
}

double ParamReader::fraction(const std::string& key, double fallback) {
  double x = number(key, fallback);
  if (!(x >= 0 && x < 1)) throw ParamError(fmt::format("{} must be in [0, 1), got {}", key, x));
  return x;
}

int64_t ParamReader::integer(const std::string& key, int64_t fallback, int64_t min_value) {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_number_integer()) throw ParamError(fmt::format("{} must be an integer, got {}", key, shown(*v)));
  auto x = v->get<int64_t>();
  if (x < min_value) throw ParamError(fmt::format("{} must be >= {}, got {}", key, min_value, x));
  return x;
}

bool ParamReader::boolean(const std::string& key, bool fallback) {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw ParamError(fmt::format("{} must be true or false, got {}", key, shown(*v)));
  return v->get<bool>();
}

namespace {
constexpr std::array<EnumName<OptimizerKind>, 3> kOptimizerNames = {
    {{OptimizerKind::sgd, "sgd"}, {OptimizerKind::adam, "adam"}, {OptimizerKind::adamw, "adamw"}}};
constexpr std::array<EnumName<ModelParallelism>, 2> kModelParallelismNames = {
    {{ModelParallelism::automatic, "auto"}, {ModelParallelism::pipeline, "pipeline"}}};
}  // namespace

std::string to_string(OptimizerKind kind) { return enum_name(kOptimizerNames, kind); }

std::optional<OptimizerKind> parse_optimizer_kind(const std::string& name) {
  return enum_named<OptimizerKind>(kOptimizerNames, name);
}

std::string to_string(ModelParallelism kind) { return enum_name(kModelParallelismNames, kind); }

std::optional<ModelParallelism> parse_model_parallelism(const std::string& name) {
  return enum_named<ModelParallelism>(kModelParallelismNames, name);
}

std::string ParamReader::string(const std::string& key, const std::string& fallback) {
  const auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) throw ParamError(fmt::format("{} must be a string, got {}", key, shown(*v)));
  return v->get<std::string>();
}

std::vector<int64_t> ParamReader::int_list(const std::string& key, std::vector<int64_t> fallback, int64_t min_value) {
  const auto* v = find(key);
  if (!v) return fallback;
  std::vector<int64_t> out;
  auto bad = [&] {
    return ParamError(fmt::format("{} must be a list of integers >= {}, got {}", key, min_value, shown(*v)));
  };
  if (v->is_number_integer()) {  // a single layer may be written without brackets
    out.push_back(v->get<int64_t>());
  } else if (v->is_array() && !v->empty()) {
    for (const auto& item : *v) {
      if (!item.is_number_integer()) throw bad();
      out.push_back(item.get<int64_t>());
    }
  } else {
    throw bad();
  }
  for (auto x : out)
    if (x < min_value) throw bad();
  return out;
}

std::vector<std::string> ParamReader::unread_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : params_.items())
    if (!read_.count(key)) out.push_back(key);
  return out;
}

TrainingParams TrainingParams::read(ParamReader& r) {
  TrainingParams p;
  p.model = r.string("model", "");
  if (p.model.empty()) throw ParamError("model is missing: name a zoo model (mlp, cnn, resnet) or a .pt file");
  p.lr = r.positive_number("lr", p.lr);
  p.batch_size = r.integer("batch_size", p.batch_size, 1);
  const std::string optimizer = r.string("optimizer", to_string(p.optimizer));
  const std::optional<OptimizerKind> kind = parse_optimizer_kind(optimizer);
  if (!kind) throw ParamError(fmt::format("optimizer must be one of sgd, adam, adamw; got \"{}\"", optimizer));
  p.optimizer = *kind;
  p.weight_decay = r.number("weight_decay", p.optimizer == OptimizerKind::adamw ? 0.01 : 0.0);
  if (p.weight_decay < 0) throw ParamError("weight_decay must be >= 0");
  p.momentum = r.number("momentum", p.momentum);
  if (p.momentum < 0 || p.momentum >= 1) throw ParamError("momentum must be in [0, 1)");
  p.nesterov = r.boolean("nesterov", p.nesterov);
  if (p.nesterov && p.optimizer != OptimizerKind::sgd) throw ParamError("nesterov applies to optimizer = \"sgd\" only");
  if (p.nesterov && p.momentum <= 0) throw ParamError("nesterov needs momentum > 0");
  const std::string parallelism = r.string("parallelism", to_string(ModelParallelism::automatic));
  const std::optional<ModelParallelism> parallel = parse_model_parallelism(parallelism);
  if (!parallel) throw ParamError(fmt::format("parallelism must be \"auto\" or \"pipeline\"; got \"{}\"", parallelism));
  p.parallelism = *parallel;
  // Both only with a pipeline: absent they read as 0, which a present key cannot be.
  const auto stages = r.integer("stages", 0, 2);
  const auto micro_batches = r.integer("micro_batches", 0, 1);
  if ((stages > 0 || micro_batches > 0) && p.parallelism != ModelParallelism::pipeline)
    throw ParamError(
        fmt::format("{} applies to parallelism = \"pipeline\" only", stages > 0 ? "stages" : "micro_batches"));
  p.stages = static_cast<int>(stages);
  if (micro_batches > 0) p.micro_batches = static_cast<int>(micro_batches);
  return p;
}

}  // namespace cerebro::models
