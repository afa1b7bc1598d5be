#include "runtime/spec/scheduler_kind.hpp"

#include <ostream>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

const std::vector<SchedulerInfo>& scheduler_registry() {
  static const std::vector<SchedulerInfo> table = {
      {SchedulerKind::randomized, "randomized", "the paper's Algorithm 1: a random runnable unit for each idle worker"},
      {SchedulerKind::critical_path, "critical_path",
       "learns worker speeds and config costs, longest remaining chain first"},
  };
  return table;
}

std::string to_string(SchedulerKind kind) { return enum_name(scheduler_registry(), kind); }

std::optional<SchedulerKind> parse_scheduler_kind(const std::string& name) {
  return enum_named<SchedulerKind>(scheduler_registry(), name);
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = enum_names(scheduler_registry());
  return names;
}

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out = {to_string(kDefaultScheduler)};
    for (const auto& info : scheduler_registry()) {
      if (info.kind != kDefaultScheduler) out.push_back(info.name);
    }
    return out;
  }();
  return names;
}

std::ostream& operator<<(std::ostream& os, SchedulerKind kind) { return os << to_string(kind); }

}  // namespace cerebro
