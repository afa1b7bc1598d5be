#include "runtime/spec/objective.hpp"

namespace cerebro {

namespace {
const std::pair<BuiltinObjective, const char*> builtin_names[] = {{BuiltinObjective::parameters, "parameters"},
                                                                  {BuiltinObjective::train_seconds, "train_seconds"},
                                                                  {BuiltinObjective::inference_ms, "inference_ms"}};
}  // namespace

std::optional<Objective> parse_objective(const std::string& name) {
  if (auto metric = parse_metric(name)) return Objective{name, metric, std::nullopt};
  for (const auto& [kind, text] : builtin_names)
    if (name == text) return Objective{name, std::nullopt, kind};
  return std::nullopt;
}

std::vector<std::string> objective_names() {
  std::vector<std::string> names = metric_names();
  for (const auto& [kind, text] : builtin_names) names.push_back(text);
  return names;
}

}  // namespace cerebro
