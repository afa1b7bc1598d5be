#pragma once
// Helpers for the fault-matrix tests: fault injection on the command line and
// checks on a run's committed unit log.

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "runtime/store/state_store.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "test/support/e2e_util.hpp"

namespace cerebro::faults {

// The environment prefix that arms test-only fault injection.
inline std::string with_faults(const std::string& faults) {
  return "CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test CEREBRO_FAULTS='" + faults + "' ";
}

using UnitKey = std::tuple<ConfigId, PartitionId, int32_t>;

inline UnitKey key_of(const UnitLogEntry& e) { return {e.config, e.partition, e.epoch}; }

inline std::vector<UnitRecord> records_of(const std::vector<UnitLogEntry>& log) { return e2e::committed_records(log); }

// The synced commits that wrote `log`: a unit trained alone is one, and a
// data-parallel gang's k entries are one more (they share one write). Under
// parallelism = "auto" a gang may form whenever fewer configs than workers
// are runnable, so a test that crashes "after the K-th commit" counts these,
// not entries.
inline size_t commits_in(const std::vector<UnitLogEntry>& log) {
  std::set<int64_t> gangs;
  size_t alone = 0;
  for (const auto& e : log) {
    if (e.gang_size > 0)
      gangs.insert(e.gang);
    else
      ++alone;
  }
  return alone + gangs.size();
}

// Every config completed `epochs` epochs over `partitions` partitions, MOP's
// invariants hold on the committed log, and no unit was committed twice.
inline void check_complete_run(const std::vector<UnitLogEntry>& log, int configs, int partitions, int epochs) {
  ExpectedRun expected{partitions, {}};
  for (ConfigId c = 0; c < configs; ++c) expected.epochs_completed[c] = epochs;
  auto invariants = check_mop_invariants(records_of(log), expected);
  BOOST_TEST(invariants.ok(), invariants.message());
  BOOST_TEST(log.size() == static_cast<size_t>(configs * partitions * epochs));
}

// Opens a run's (or an experiment's) state store read-only for checks.
inline std::unique_ptr<StateStore> open_store(const std::string& run_dir) {
  auto store = StateStore::open(run_dir + "/state", false);
  BOOST_REQUIRE_MESSAGE(store.ok(), store.error());
  return std::move(store).value();
}

}  // namespace cerebro::faults
