#include "runtime/spec/metric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <utility>

namespace cerebro {

namespace {

// Every built-in quantity and its direction; the task table below says who computes which.
const std::pair<const char*, bool> kBuiltinQuantities[] = {
    {"accuracy", true}, {"loss", false}, {"macro_f1", true},        {"top5_accuracy", true}, {"mse", false},
    {"mae", false},     {"r2", true},    {"subset_accuracy", true}, {"micro_f1", true}};

const std::pair<const char*, bool>* find_builtin(const std::string& quantity) {
  for (const auto& entry : kBuiltinQuantities)
    if (quantity == entry.first) return &entry;
  return nullptr;
}

}  // namespace

const Metric Metric::val_accuracy{"accuracy", true};
const Metric Metric::val_loss{"loss", false};

Metric::Metric() : quantity_("accuracy"), higher_is_better_(true) {}
Metric::Metric(std::string quantity, bool higher_is_better)
    : quantity_(std::move(quantity)), higher_is_better_(higher_is_better) {}

bool Metric::builtin() const { return find_builtin(quantity_) != nullptr; }

std::string to_string(const Metric& metric) { return metric.name(); }

std::optional<Metric> parse_metric(const std::string& name) {
  if (name.rfind("val_", 0) != 0) return std::nullopt;
  const auto* entry = find_builtin(name.substr(4));
  if (!entry) return std::nullopt;
  return Metric(entry->first, entry->second);
}

std::ostream& operator<<(std::ostream& os, const Metric& metric) { return os << to_string(metric); }

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : kBuiltinQuantities) out.push_back(std::string("val_") + entry.first);
    return out;
  }();
  return names;
}

const std::vector<std::string>& task_quantities(datasets::TaskKind task) {
  static const std::vector<std::string> classification = {"loss", "accuracy", "macro_f1", "top5_accuracy"};
  static const std::vector<std::string> regression = {"loss", "mse", "mae", "r2"};
  static const std::vector<std::string> multilabel = {"loss", "subset_accuracy", "micro_f1"};
  switch (task) {
    case datasets::TaskKind::regression: return regression;
    case datasets::TaskKind::multilabel: return multilabel;
    case datasets::TaskKind::classification: break;
  }
  return classification;
}

Metric default_metric(datasets::TaskKind task) {
  switch (task) {
    case datasets::TaskKind::regression: return *parse_metric("val_r2");
    case datasets::TaskKind::multilabel: return *parse_metric("val_micro_f1");
    case datasets::TaskKind::classification: break;
  }
  return Metric::val_accuracy;
}

Metric metric_from_record(const std::string& name, const std::string& goal) {
  if (auto builtin = parse_metric(name)) return *builtin;
  const std::string quantity = name.rfind("val_", 0) == 0 ? name.substr(4) : name;
  return Metric(quantity, goal != "minimize");
}

double metric_value(const Metric& metric, double loss, double accuracy, const MetricValues& values) {
  if (metric.quantity() == "loss") return loss;
  if (auto it = values.find(metric.quantity()); it != values.end()) return it->second;
  if (metric.quantity() == "accuracy") return accuracy;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string goal_of(const Metric& metric) { return metric.higher_is_better() ? "maximize" : "minimize"; }

std::vector<std::pair<std::string, double>> validation_values(double accuracy, const MetricValues& values) {
  if (values.empty()) return {{"val_accuracy", accuracy}};
  std::vector<std::pair<std::string, double>> out;
  if (auto it = values.find("accuracy"); it != values.end()) out.emplace_back("val_accuracy", it->second);
  for (const auto& [name, value] : values)
    if (name != "accuracy") out.emplace_back("val_" + name, value);
  return out;
}

}  // namespace cerebro
