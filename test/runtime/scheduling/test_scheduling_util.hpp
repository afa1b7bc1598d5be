#pragma once
// Helpers shared by the scheduling core's tests (MopBook, ExperimentControl).

#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/search/search_procedure.hpp"
#include "test/support/contract_check.hpp"

namespace cerebro::test {

// True when the Error message mentions `needle`, so a test fails if the code
// throws for another reason than the one under test.
inline auto message_has(std::string needle) {
  return [needle](const Error& e) {
    bool found = std::string(e.what()).find(needle) != std::string::npos;
    if (!found) BOOST_TEST_MESSAGE("unexpected message: " << e.what());
    return found;
  };
}

// A control over `partitions` partitions with one worker slot per partition,
// the randomized policy and fixed epochs (1).
inline ExperimentControl make_control(int partitions, int retries = 3) {
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, retries,
                           make_policy(SchedulerKind::randomized, 1), std::make_unique<FixedEpochsProcedure>());
}

// The log entry a worker would report for dispatch `d`.
inline UnitLogEntry entry_of(const Dispatch& d, double train_s = 1.0) {
  UnitLogEntry e;
  e.config = d.unit.config;
  e.partition = d.unit.partition;
  e.epoch = d.unit.epoch;
  e.worker = d.worker;
  e.examples = 10;
  e.train_loss = 1;
  e.train_s = train_s;
  e.has_validation = d.validate;
  e.val_accuracy = 0.7;
  return e;
}

}  // namespace cerebro::test
