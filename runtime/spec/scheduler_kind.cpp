#include "runtime/spec/scheduler_kind.hpp"

#include <ostream>

namespace cerebro {

const std::vector<SchedulerInfo>& scheduler_registry() {
  static const std::vector<SchedulerInfo> table = {
      {SchedulerKind::randomized, "randomized", "the paper's Algorithm 1: a random runnable unit for each idle worker"},
      {SchedulerKind::critical_path, "critical_path",
       "learns worker speeds and config costs, longest remaining chain first"},
  };
  return table;
}

std::string to_string(SchedulerKind kind) {
  for (const auto& info : scheduler_registry()) {
    if (info.kind == kind) return info.name;
  }
  return "unknown";
}

std::optional<SchedulerKind> parse_scheduler_kind(const std::string& name) {
  for (const auto& info : scheduler_registry()) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& info : scheduler_registry()) out.push_back(info.name);
    return out;
  }();
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
