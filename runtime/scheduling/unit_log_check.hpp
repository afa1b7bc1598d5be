#pragma once
// An independent check of the MOP invariants on a unit log, as recorded by the
// scheduler (or the simulator): used by scheduling tests and by end-to-end
// tests on real runs. It trusts nothing from MopBook.

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// One attempt of a unit. Only committed attempts (results kept) count; failed
// or discarded attempts are ignored by the check.
struct UnitRecord {
  ConfigId config = 0;
  PartitionId partition = 0;
  int32_t epoch = 0;
  WorkerId worker = 0;
  double start_s = 0;
  double end_s = 0;
  bool committed = false;
  // A data-parallel gang's members share a gang id (> 0, unique per gang
  // attempt) and gang_size (their number, >= 2); 0 and 0 for a unit that ran
  // alone (MOP).
  int64_t gang = 0;
  int32_t gang_size = 0;
  // When the worker was freed (on the result's arrival, before the
  // commit at end_s); < 0: at end_s. Between start_s and end_s.
  double worker_end_s = -1;
  double worker_end() const { return worker_end_s < 0 ? end_s : worker_end_s; }
  // A pipeline unit: the workers that hosted its stages 1..k-1
  // (`worker` drove it and hosted stage 0); busy from start_s to
  // worker_end() like the driver. Empty for any other unit.
  std::vector<WorkerId> pipeline_hosts;
};

struct ExpectedRun {
  int32_t num_partitions = 0;
  // Per config, the number of epochs it completed (epochs 0 .. n-1). Its epoch
  // n may be partial (a config stopped mid-epoch); nothing beyond.
  std::map<ConfigId, int32_t> epochs_completed;
};

// Checks, on committed records, in this order:
//  - each record is well formed: known config, partition in range, epoch >= 0,
//    end_s >= worker_end() >= start_s;
//  - gangs are whole: a committed gang's records share config, epoch, start
//    and end, are on distinct workers, and number gang_size (>= 2);
//  - no unit (config, partition, epoch) twice (a gang's units included);
//  - completeness: each config visits each partition once in every completed
//    epoch, its epoch n = epochs_completed is not complete and none beyond n ran;
//  - isolation: a config's attempts never overlap in time (touching is fine;
//    a gang is one attempt);
//  - one unit per worker at a time: units on a worker never overlap
//    (start_s .. worker_end(): a worker may start its next unit while the
//    previous one commits); a pipeline unit occupies its hosts as well, which
//    are distinct and not its driver;
//  - epochs in order: all of a config's epoch e ends before any of e+1 starts.
// Returns ok, or internal naming the first violation and the units involved
// (whoever scheduled the log broke MOP); invalid_argument for an expected run
// that cannot be one.
Status check_mop_invariants(const std::vector<UnitRecord>& log, const ExpectedRun& expected);

}  // namespace cerebro
