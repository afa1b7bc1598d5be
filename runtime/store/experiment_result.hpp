#pragma once
// The final result of an experiment (its CAF inspect: runtime/net/messages.hpp): the leaderboard and
// summary.json, for programs that embed cerebro (actors/embedding.hpp).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/lifecycle.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// One config's standing: its metric after its last validated epoch.
struct leaderboard_entry {
  ConfigId config = 0;
  std::string params_json;                        // the config's hyper-parameters, a JSON object
  ConfigStatus status = ConfigStatus::completed;  // completed | stopped | diverged | failed
  bool validated = false;                         // false: it never finished an epoch, `metric` is meaningless
  double metric = 0;                              // the experiment's metric (val_accuracy or val_loss)
};

struct experiment_result {
  std::string experiment;  // the id it ran under
  std::string run_dir;     // summary.json, metrics.csv, best_model.pt, state/
  std::string error;       // empty when the experiment finished
  std::string metric;      // val_accuracy (higher is better) | val_loss (lower)
  double wall_s = 0;
  std::vector<leaderboard_entry> leaderboard;  // best first; never-validated configs last, by id
  std::string summary_json;                    // summary.json (per-epoch metrics, the best config's test score ...)

  bool ok() const { return error.empty(); }
  // summary_json parsed; null when there is none (a failed experiment).
  nlohmann::json summary() const;
};

// The result of a finished run from its summary.json document; invalid_argument
// when a field is missing or of the wrong type, or a config's status is no known word.
Result<experiment_result> result_from_summary(const std::string& experiment, const std::string& run_dir,
                                              const nlohmann::json& summary);

// A failed experiment's result.
experiment_result failed_result(const std::string& experiment, const std::string& run_dir, std::string error);

// A fixed-width text table of the first `max_rows` entries, best first.
std::string format_leaderboard(const experiment_result& result, size_t max_rows);

}  // namespace cerebro
