#pragma once
// The scheduling policies a spec can name ([cluster] scheduler) and `cerebro
// simulate --policy` runs: one table, read by the spec parser, the policy
// factory (runtime/scheduling/scheduling_policy.hpp make_policy) and the
// simulate command. It lives at the bottom layer because ClusterSpec holds the
// kind; the policies themselves are in runtime/scheduling.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cerebro {

enum class SchedulerKind { randomized, critical_path };

struct SchedulerInfo {
  SchedulerKind kind;
  std::string name;         // the spelling in specs, JSON, the CLI and messages
  std::string description;  // one line, for help texts
};

// Every policy, in the order `simulate --policy all` runs them.
const std::vector<SchedulerInfo>& scheduler_registry();

// The spec's default: critical_path beats randomized in simulation (docs/SIMULATOR.md).
constexpr SchedulerKind kDefaultScheduler = SchedulerKind::critical_path;

std::string to_string(SchedulerKind kind);
std::optional<SchedulerKind> parse_scheduler_kind(const std::string& name);
std::ostream& operator<<(std::ostream& os, SchedulerKind kind);

// The names in registry order (make_policy's order): randomized, critical_path.
const std::vector<std::string>& policy_names();
// The accepted values of [cluster] scheduler, the default first: critical_path, randomized.
const std::vector<std::string>& scheduler_names();

}  // namespace cerebro
