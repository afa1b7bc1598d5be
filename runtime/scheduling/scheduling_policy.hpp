#pragma once
// SchedulingPolicy: decides which unit an idle worker runs next. One policy per
// file behind this small interface; the same policy object drives the real
// scheduler actor and the simulator. Policies only choose: MopBook enforces the
// MOP invariants, so a policy can never break them.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/spec/scheduler_kind.hpp"

namespace cerebro {

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  virtual std::string name() const = 0;
  // What a committed unit measured, for policies that learn worker speeds and
  // config costs online. Called by ExperimentControl for every committed unit.
  struct Observation {
    WorkerId worker = 0;
    Unit unit;
    double train_s = 0;     // training time of the unit
    double validate_s = 0;  // validation time (last unit of an epoch)
    int64_t examples = 0;
  };
  virtual void observe(const Observation& observation) { (void)observation; }
  // What config c is expected to cost before any of its units ran: seconds
  // per training example at a typical worker's speed (runtime/scheduling/
  // cost_prior.hpp measures it when the run starts). Policies that learn
  // costs use it until c's own units are measured; others ignore it.
  virtual void set_cost_prior(ConfigId c, double seconds_per_example) {
    (void)c;
    (void)seconds_per_example;
  }
  // A hint: unit u's observation comes soon (the simulator calls this one
  // event ahead), so a policy may fetch what observe() will touch into the
  // cache. No effect on decisions.
  virtual void prefetch_observation(WorkerId worker, const Unit& u) const {
    (void)worker;
    (void)u;
  }
  // Picks the unit idle worker w should run next, or nullopt to leave it idle.
  // The pick is always one of book.eligible_units(w).
  virtual std::optional<Unit> choose(WorkerId w, const MopBook& book) = 0;
};

// Policies constructible from their kind alone (runtime/spec/scheduler_kind.hpp
// scheduler_registry(), which also gives policy_names()): randomized (the
// paper's Algorithm 1, randomized_policy.hpp) and critical_path (learns worker
// speeds and config costs, longest remaining chain first;
// critical_path_policy.hpp).
std::unique_ptr<SchedulingPolicy> make_policy(SchedulerKind kind, uint64_t seed);
// The same by name, for the command line: invalid_argument naming the known
// policies for any other name.
Result<std::unique_ptr<SchedulingPolicy>> make_policy(const std::string& name, uint64_t seed);

}  // namespace cerebro
