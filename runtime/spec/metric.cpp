#include "runtime/spec/metric.hpp"

#include <ostream>

namespace cerebro {

std::string to_string(Metric metric) {
  switch (metric) {
    case Metric::val_accuracy: return "val_accuracy";
    case Metric::val_loss: return "val_loss";
  }
  return "unknown";
}

std::optional<Metric> parse_metric(const std::string& name) {
  for (Metric metric : {Metric::val_accuracy, Metric::val_loss}) {
    if (to_string(metric) == name) return metric;
  }
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Metric metric) { return os << to_string(metric); }

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = {to_string(Metric::val_accuracy), to_string(Metric::val_loss)};
  return names;
}

}  // namespace cerebro
