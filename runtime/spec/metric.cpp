#include "runtime/spec/metric.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <ostream>
#include <utility>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

namespace {

struct QuantityInfo {
  Quantity kind;
  std::string_view name;
  bool higher_is_better;
};

// Every built-in quantity and its direction; the task table below says who computes which.
constexpr std::array<QuantityInfo, 14> kBuiltinQuantities = {{{Quantity::accuracy, "accuracy", true},
                                                              {Quantity::loss, "loss", false},
                                                              {Quantity::macro_f1, "macro_f1", true},
                                                              {Quantity::top5_accuracy, "top5_accuracy", true},
                                                              {Quantity::mse, "mse", false},
                                                              {Quantity::mae, "mae", false},
                                                              {Quantity::r2, "r2", true},
                                                              {Quantity::subset_accuracy, "subset_accuracy", true},
                                                              {Quantity::micro_f1, "micro_f1", true},
                                                              {Quantity::token_accuracy, "token_accuracy", true},
                                                              {Quantity::bleu4, "bleu4", true},
                                                              {Quantity::map50, "map50", true},
                                                              {Quantity::map, "map", true},
                                                              {Quantity::perplexity, "perplexity", false}}};

constexpr std::array<EnumName<Goal>, 2> kGoalNames = {{{Goal::maximize, "maximize"}, {Goal::minimize, "minimize"}}};

const QuantityInfo& info_of(Quantity kind) {
  for (const auto& entry : kBuiltinQuantities)
    if (entry.kind == kind) return entry;
  return kBuiltinQuantities[0];
}

}  // namespace

Quantity quantity_named(const std::string& quantity) {
  return enum_named<Quantity>(kBuiltinQuantities, quantity).value_or(Quantity::custom);
}

std::string to_string(Goal goal) { return enum_name(kGoalNames, goal); }
std::optional<Goal> parse_goal(const std::string& text) { return enum_named<Goal>(kGoalNames, text); }

const Metric Metric::val_accuracy{"accuracy", true};
const Metric Metric::val_loss{"loss", false};

Metric::Metric() : quantity_("accuracy"), kind_(Quantity::accuracy), higher_is_better_(true) {}
Metric::Metric(std::string quantity, bool higher_is_better)
    : quantity_(std::move(quantity)), kind_(quantity_named(quantity_)), higher_is_better_(higher_is_better) {}

std::string to_string(const Metric& metric) { return metric.name(); }

Quantity quantity_of_name(const std::string& metric_name) {
  if (metric_name.rfind("val_", 0) != 0) return Quantity::custom;
  return quantity_named(metric_name.substr(4));
}

std::optional<Metric> parse_metric(const std::string& name) {
  const Quantity kind = quantity_of_name(name);
  if (kind == Quantity::custom) return std::nullopt;
  const QuantityInfo& info = info_of(kind);
  return Metric(std::string(info.name), info.higher_is_better);
}

std::ostream& operator<<(std::ostream& os, const Metric& metric) { return os << to_string(metric); }

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const std::string& quantity : enum_names(kBuiltinQuantities)) out.push_back("val_" + quantity);
    return out;
  }();
  return names;
}

const std::vector<std::string>& task_quantities(datasets::TaskKind task) {
  static const std::vector<std::string> classification = {"loss", "accuracy", "macro_f1", "top5_accuracy"};
  static const std::vector<std::string> regression = {"loss", "mse", "mae", "r2"};
  static const std::vector<std::string> multilabel = {"loss", "subset_accuracy", "micro_f1"};
  static const std::vector<std::string> captioning = {"loss", "token_accuracy", "bleu4"};
  static const std::vector<std::string> detection = {"loss", "map50", "map"};
  static const std::vector<std::string> language_model = {"loss", "token_accuracy", "perplexity"};
  switch (task) {
    case datasets::TaskKind::regression: return regression;
    case datasets::TaskKind::multilabel: return multilabel;
    case datasets::TaskKind::captioning: return captioning;
    case datasets::TaskKind::detection: return detection;
    case datasets::TaskKind::language_model: return language_model;
    case datasets::TaskKind::classification: break;
  }
  return classification;
}

Metric default_metric(datasets::TaskKind task) {
  switch (task) {
    case datasets::TaskKind::regression: return *parse_metric("val_r2");
    case datasets::TaskKind::multilabel: return *parse_metric("val_micro_f1");
    case datasets::TaskKind::captioning: return *parse_metric("val_bleu4");
    case datasets::TaskKind::detection: return *parse_metric("val_map");
    case datasets::TaskKind::language_model: return *parse_metric("val_perplexity");
    case datasets::TaskKind::classification: break;
  }
  return Metric::val_accuracy;
}

Metric metric_from_record(const std::string& name, const std::string& goal) {
  if (auto builtin = parse_metric(name)) return *builtin;
  const std::string quantity = name.rfind("val_", 0) == 0 ? name.substr(4) : name;
  return Metric(quantity, parse_goal(goal) != Goal::minimize);
}

double metric_value(const Metric& metric, double loss, double accuracy, const MetricValues& values) {
  if (metric.kind() == Quantity::loss) return loss;
  if (auto it = values.find(metric.quantity()); it != values.end()) return it->second;
  if (metric.kind() == Quantity::accuracy) return accuracy;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string goal_of(const Metric& metric) {
  return to_string(metric.higher_is_better() ? Goal::maximize : Goal::minimize);
}

std::vector<std::pair<std::string, double>> validation_values(double accuracy, const MetricValues& values) {
  if (values.empty()) return {{"val_accuracy", accuracy}};
  std::vector<std::pair<std::string, double>> out;
  const std::string& accuracy_name = Metric::val_accuracy.quantity();
  if (auto it = values.find(accuracy_name); it != values.end())
    out.emplace_back(Metric::val_accuracy.name(), it->second);
  for (const auto& [name, value] : values)
    if (quantity_named(name) != Quantity::accuracy) out.emplace_back("val_" + name, value);
  return out;
}

}  // namespace cerebro
