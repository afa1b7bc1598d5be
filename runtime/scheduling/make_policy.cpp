#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/base/contract.hpp"
#include "runtime/scheduling/critical_path_policy.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"

namespace cerebro {

// The factory of the policies constructible from their kind alone.
std::unique_ptr<SchedulingPolicy> make_policy(SchedulerKind kind, uint64_t seed) {
  switch (kind) {
    case SchedulerKind::randomized: return std::make_unique<RandomizedPolicy>(seed);
    case SchedulerKind::critical_path: return std::make_unique<CriticalPathPolicy>(seed);
  }
  contract_violation("make_policy", fmt::format("scheduling policy {} has no factory", static_cast<int>(kind)));
}

Result<std::unique_ptr<SchedulingPolicy>> make_policy(const std::string& name, uint64_t seed) {
  if (auto kind = parse_scheduler_kind(name)) return make_policy(*kind, seed);
  return Status::invalid_argument(
      fmt::format("unknown scheduling policy '{}' (known: {})", name, fmt::join(policy_names(), ", ")));
}

}  // namespace cerebro
