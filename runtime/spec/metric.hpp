#pragma once
// The metric an experiment ranks its configs by ([experiment] metric): one
// type for the spec, the search procedures (which score by it) and
// ExperimentControl (which keeps each config's last value of it). A metric is
// a quantity computed on the validation set (the loss, "accuracy", "r2", or
// a training template's own metric) plus its direction; its name is
// "val_<quantity>", the text in specs, the state store's meta, summary.json
// and leaderboards, and "test_<quantity>" names its value on the test set.
//
// The built-in quantities and the tasks that compute them are one table
// (metric.cpp); a template's metric is any other quantity with the
// direction the spec gives (metric_goal).

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datasets/task_kind.hpp"

namespace cerebro {

// The quantities the tasks compute (metric.cpp's table spells them);
// `custom` is a training template's own.
enum class Quantity {
  accuracy,
  loss,
  macro_f1,
  top5_accuracy,
  mse,
  mae,
  r2,
  subset_accuracy,
  micro_f1,
  token_accuracy,
  bleu4,
  map50,
  map,
  perplexity,
  custom
};
// The quantity a name ("accuracy", "r2") stands for; Quantity::custom for any other.
Quantity quantity_named(const std::string& quantity);

// Which way a metric improves: [experiment] metric_goal, summary.json's
// metric_goal and its objectives' direction.
enum class Goal { maximize, minimize };
std::string to_string(Goal goal);
std::optional<Goal> parse_goal(const std::string& text);

class Metric {
 public:
  static const Metric val_accuracy;  // higher is better (the classification default)
  static const Metric val_loss;      // lower is better

  Metric();  // val_accuracy
  Metric(std::string quantity, bool higher_is_better);

  const std::string& quantity() const { return quantity_; }  // "accuracy", "r2", "loss" ...
  Quantity kind() const { return kind_; }                    // Quantity::custom for a template's own
  bool higher_is_better() const { return higher_is_better_; }
  std::string name() const { return "val_" + quantity_; }
  std::string test_name() const { return "test_" + quantity_; }
  // One of the built-in quantities (else a training template's own).
  bool builtin() const { return kind_ != Quantity::custom; }

  friend bool operator==(const Metric& a, const Metric& b) {
    return a.quantity_ == b.quantity_ && a.higher_is_better_ == b.higher_is_better_;
  }
  friend bool operator!=(const Metric& a, const Metric& b) { return !(a == b); }

 private:
  std::string quantity_;
  Quantity kind_ = Quantity::accuracy;
  bool higher_is_better_ = true;
};

// "val_<quantity>"
std::string to_string(const Metric& metric);
// A built-in metric by its name ("val_r2"); nullopt for any other name.
std::optional<Metric> parse_metric(const std::string& name);
std::ostream& operator<<(std::ostream& os, const Metric& metric);

// The names of the built-in metrics, the default first: val_accuracy,
// val_loss, then the other tasks' (val_macro_f1, val_top5_accuracy, val_mse,
// val_mae, val_r2, val_subset_accuracy, val_micro_f1, val_token_accuracy,
// val_bleu4, val_map50, val_map, val_perplexity).
const std::vector<std::string>& metric_names();

inline bool higher_is_better(const Metric& metric) { return metric.higher_is_better(); }

// The quantities a task computes on validation and test, the loss first:
//   classification  loss (cross-entropy), accuracy, macro_f1, top5_accuracy (more than 5 classes)
//   regression      loss (MSE on standardized targets), mse, mae, r2 (in the targets' units)
//   multilabel      loss (binary cross-entropy), subset_accuracy, micro_f1
//   captioning      loss (teacher-forced token cross-entropy), token_accuracy, bleu4 (corpus BLEU-4)
//   detection       loss (the detector's), map50, map (COCO's AP at IoU 0.50 and over 0.50:0.95)
//   language_model  loss (next-token cross-entropy), token_accuracy, perplexity
const std::vector<std::string>& task_quantities(datasets::TaskKind task);
// The metric a task ranks by when the spec names none: val_accuracy, val_r2, val_micro_f1, val_bleu4,
// val_map, val_perplexity.
Metric default_metric(datasets::TaskKind task);

// A metric read back from a stored record: its name and, for a template's
// metric, the direction recorded with it ("maximize" | "minimize"; ignored
// for a built-in, whose direction is known). Unknown names without a
// direction rank higher-is-better.
Metric metric_from_record(const std::string& name, const std::string& goal = "");
// "maximize" | "minimize"
std::string goal_of(const Metric& metric);
// The metric a report names ("val_r2", "val_ndcg"): Quantity::custom when it
// is none of the built-in ones or not a validation name at all.
Quantity quantity_of_name(const std::string& metric_name);

// A validation's (or test's) named values besides the loss: "accuracy",
// "r2", a template's "ndcg" ... (for classification "accuracy" is also kept
// in its own field, as it was before named values).
using MetricValues = std::map<std::string, double>;

// The metric's value: the loss, else its quantity in `values` (accuracy
// falls back to `accuracy` for records without named values); NaN when the
// validation did not compute it (it then ranks last).
double metric_value(const Metric& metric, double loss, double accuracy, const MetricValues& values);

// A validation's values as every report shows them: "val_accuracy" first
// (`accuracy` itself for records without named values, as before named
// values), then "val_<name>" for each other named value, by name.
std::vector<std::pair<std::string, double>> validation_values(double accuracy, const MetricValues& values);

}  // namespace cerebro
