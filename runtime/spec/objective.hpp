#pragma once
// Several objectives: `[experiment] metric = ["val_accuracy",
// "parameters"]`. An objective is a task metric (runtime/spec/metric.hpp, its
// direction is the metric's) or a built-in cost, always minimised:
//   parameters     the model's trainable parameters (a count)
//   train_seconds  the config's training time, summed over its units
//   inference_ms   milliseconds per example to predict the test set (batches
//                  of 256 on one thread, measured at the run's end)
// Built on the single Metric, which stays the ranking metric of the run (the
// first task metric in the list; docs/SEARCH.md, "Several objectives").

#include <optional>
#include <string>
#include <vector>

#include "runtime/spec/metric.hpp"

namespace cerebro {

enum class BuiltinObjective { parameters, train_seconds, inference_ms };

struct Objective {
  std::string name;
  std::optional<Metric> metric;             // a task metric, or
  std::optional<BuiltinObjective> builtin;  // a built-in cost
  bool maximize() const { return metric ? higher_is_better(*metric) : false; }
};

std::optional<Objective> parse_objective(const std::string& name);
// The task metrics' names, then parameters, train_seconds, inference_ms.
std::vector<std::string> objective_names();

}  // namespace cerebro
