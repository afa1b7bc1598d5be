#pragma once
// The metric an experiment ranks its configs by ([experiment] metric): one
// enum for the spec, the search procedures (which score by it) and
// ExperimentControl (which keeps each config's last value of it). Its name is
// the text in specs, the state store's meta, summary.json and leaderboards.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cerebro {

enum class Metric {
  val_accuracy,  // higher is better (the default)
  val_loss,      // lower is better
};

std::string to_string(Metric metric);
std::optional<Metric> parse_metric(const std::string& name);
std::ostream& operator<<(std::ostream& os, Metric metric);

// The accepted values of [experiment] metric, the default first: val_accuracy, val_loss.
const std::vector<std::string>& metric_names();

inline bool higher_is_better(Metric metric) { return metric == Metric::val_accuracy; }

}  // namespace cerebro
