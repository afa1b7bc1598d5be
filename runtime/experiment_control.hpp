#pragma once
// The scheduler's logic, as a plain class: which unit an idle worker runs
// next, what a committed or failed unit changes, epoch-boundary decisions,
// divergence, retries and progress. The scheduler actor is a thin shell that
// routes messages to it; tests drive it directly.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ids.hpp"
#include "runtime/mop_book.hpp"
#include "runtime/scheduling_policy.hpp"
#include "runtime/search_procedure.hpp"
#include "runtime/state_store.hpp"

namespace cerebro {

// A unit an idle worker should run now.
struct Dispatch {
  WorkerId worker = 0;
  Unit unit;
  uint64_t seed = 0;      // per-unit seed, independent of the schedule
  bool validate = false;  // last unit of the config's epoch
  int32_t attempt = 0;
};

struct ConfigOutcome {
  std::string status = "running";  // running | completed | diverged | failed | stopped
  std::string error;
};

// The seed of a unit: a function of (experiment seed, config, epoch,
// partition) only, so any schedule (and a replay) trains each unit the same.
uint64_t unit_seed(uint64_t experiment_seed, const Unit& unit);

class ExperimentControl {
 public:
  enum class Metric { val_accuracy, val_loss };

  ExperimentControl(int32_t num_partitions, uint64_t seed, Metric metric, int max_unit_retries,
                    std::unique_ptr<SchedulingPolicy> policy, std::unique_ptr<SearchProcedure> search);

  void add_worker(WorkerId w, std::vector<PartitionId> holds);
  // The worker is gone; its unit (if any) goes back to the queue.
  void remove_worker(WorkerId w);
  void add_config(ConfigId c, int32_t epochs);
  // A config that could not start (pilot check failed) is recorded as failed.
  void reject_config(ConfigId c, const std::string& error);

  // Units to start now, one per idle worker that has eligible work.
  std::vector<Dispatch> dispatch();

  // The unit's state and log entry are durable. Returns a human line when the
  // config's epoch ended (its validation result), else empty.
  std::string on_committed(WorkerId w, const UnitLogEntry& entry);
  // The unit's attempt failed (exception in the worker). Retried up to
  // max_unit_retries times, then its config fails with `error`.
  std::string on_failed(WorkerId w, const Unit& unit, const std::string& error);

  bool all_done() const { return book_.all_done(); }
  int64_t units_done() const { return book_.units_done(); }
  int64_t units_total() const { return book_.units_total(); }
  std::optional<std::pair<ConfigId, double>> best() const;
  const std::map<ConfigId, ConfigOutcome>& outcomes() const { return outcomes_; }
  bool better(double a, double b) const;  // is metric value a better than b

 private:
  MopBook book_;
  uint64_t seed_;
  Metric metric_;
  int max_unit_retries_;
  std::unique_ptr<SchedulingPolicy> policy_;
  std::unique_ptr<SearchProcedure> search_;
  std::map<ConfigId, ConfigOutcome> outcomes_;
  std::map<Unit, int32_t> failed_attempts_;
  std::map<ConfigId, double> last_metric_;
  std::map<ConfigId, std::pair<double, int64_t>> epoch_loss_;  // weighted sum, examples
};

}  // namespace cerebro
