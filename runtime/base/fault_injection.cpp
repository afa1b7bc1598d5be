#include "runtime/base/fault_injection.hpp"

#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// The rules CEREBRO_FAULTS may hold, by the name before '=' and how many
// ':'-separated arguments follow it.
enum class FaultKind {
  fail_unit,
  damage_state,
  unreadable_state,
  worker_exit,
  slow_worker,
  crash,
  fatal_signal,
  stop,
  throw_at_point
};

struct FaultRuleInfo {
  FaultKind kind;
  std::string_view name;
  size_t min_args, max_args;
};

constexpr std::array<FaultRuleInfo, 9> kFaultRules = {{{FaultKind::fail_unit, "fail_unit", 3, 4},
                                                       {FaultKind::damage_state, "damage_state", 1, 1},
                                                       {FaultKind::unreadable_state, "unreadable_state", 1, 1},
                                                       {FaultKind::worker_exit, "worker_exit", 3, 3},
                                                       {FaultKind::slow_worker, "slow_worker", 2, 2},
                                                       {FaultKind::crash, "crash", 1, 2},
                                                       {FaultKind::fatal_signal, "fatal_signal", 1, 2},
                                                       {FaultKind::stop, "stop", 1, 2},
                                                       {FaultKind::throw_at_point, "throw", 1, 2}}};

const FaultRuleInfo& rule_info(FaultKind kind) {
  for (const auto& info : kFaultRules)
    if (info.kind == kind) return info;
  return kFaultRules[0];
}

}  // namespace

Result<FaultInjection> FaultInjection::parse(const std::string& rules) {
  FaultInjection f;
  f.enabled_ = true;
  for (const auto& rule : split(rules, ';')) {
    auto eq = rule.find('=');
    if (eq == std::string::npos) return Status::invalid_argument(fmt::format("fault rule \"{}\" has no '='", rule));
    const auto kind = enum_named<FaultKind>(kFaultRules, rule.substr(0, eq));
    auto args = split(rule.substr(eq + 1), ':');
    const auto not_a_rule = [&rule] {
      return Status::invalid_argument(
          fmt::format("fault rule \"{}\" is not one of fail_unit=C:P:E[:N], worker_exit=C:P:E, damage_state=K, "
                      "unreadable_state=K, slow_worker=W:F (F >= 1), crash=POINT[:K], fatal_signal=POINT[:K], "
                      "stop=POINT[:K], throw=POINT[:K]",
                      rule));
    };
    if (!kind) return not_a_rule();
    const FaultRuleInfo& info = rule_info(*kind);
    if (args.size() < info.min_args || args.size() > info.max_args) return not_a_rule();
    // How many arrivals at a point pass before the fault fires there (default: the first).
    const auto at_point = [&args, &f](std::map<std::string, int64_t>& faults) {
      faults[args[0]] = args.size() == 2 ? std::stoll(args[1]) : 1;
      f.arrivals_[args[0]] = 0;
    };
    try {
      switch (*kind) {
        case FaultKind::fail_unit:
          f.failing_units_[{std::stoi(args[0]), std::stoi(args[1]), std::stoi(args[2])}] =
              args.size() == 4 ? std::stoi(args[3]) : 1;
          break;
        case FaultKind::damage_state: f.damaged_commits_.insert(std::stoll(args[0])); break;
        case FaultKind::unreadable_state: f.unreadable_reads_.insert(std::stoll(args[0])); break;
        case FaultKind::worker_exit:
          f.exiting_units_.insert({std::stoi(args[0]), std::stoi(args[1]), std::stoi(args[2])});
          break;
        case FaultKind::slow_worker:
          if (std::stod(args[1]) < 1) return not_a_rule();
          f.slow_workers_[std::stoi(args[0])] = std::stod(args[1]);
          break;
        case FaultKind::crash: at_point(f.crashes_); break;
        case FaultKind::fatal_signal: at_point(f.fatal_signals_); break;
        case FaultKind::stop: at_point(f.stops_); break;
        case FaultKind::throw_at_point: at_point(f.throws_); break;
      }
    } catch (const std::exception&) {
      return Status::invalid_argument(fmt::format("fault rule \"{}\" has a non-numeric argument", rule));
    }
  }
  return f;
}

const FaultInjection& FaultInjection::instance() {
  static const FaultInjection faults = [] {
    const char* enable = std::getenv("CEREBRO_FAULT_INJECTION_ENABLE");
    const char* rules = std::getenv("CEREBRO_FAULTS");
    if (!enable || std::string(enable) != "i-am-a-test" || !rules) return FaultInjection();
    auto parsed = parse(rules);
    if (!parsed.ok()) {
      fmt::print(stderr, "error: CEREBRO_FAULTS: {}\n", parsed.error());
      std::_Exit(2);
    }
    fmt::print(stderr, "warning: test fault injection is active: {}\n", rules);
    return std::move(parsed).value();
  }();
  return faults;
}

bool FaultInjection::fail_unit(int32_t config, int32_t partition, int32_t epoch, int32_t attempt) const {
  auto it = failing_units_.find({config, partition, epoch});
  return it != failing_units_.end() && (it->second < 0 || attempt < it->second);
}

bool FaultInjection::worker_exit(int32_t config, int32_t partition, int32_t epoch, int32_t attempt) const {
  return attempt == 0 && exiting_units_.count({config, partition, epoch}) > 0;
}

double FaultInjection::slowdown(int32_t worker) const {
  auto it = slow_workers_.find(worker);
  return it == slow_workers_.end() ? 1.0 : it->second;
}

bool FaultInjection::stops_at(const std::string& point, int64_t ahead) const {
  auto arrival = arrivals_.find(point);
  if (arrival == arrivals_.end()) return false;
  const int64_t k = arrival->second.load() + ahead;
  auto crash = crashes_.find(point);
  auto signal = fatal_signals_.find(point);
  return (crash != crashes_.end() && crash->second == k) || (signal != fatal_signals_.end() && signal->second == k);
}

Status FaultInjection::crash_point(const std::string& point) const {
  auto arrival = arrivals_.find(point);
  if (arrival == arrivals_.end()) return Status::ok_status();
  const int64_t k = ++arrival->second;
  if (auto it = crashes_.find(point); it != crashes_.end() && it->second == k) {
    fmt::print(stderr, "fault injection: crashing at {}\n", point);
    std::_Exit(137);
  }
  if (auto it = fatal_signals_.find(point); it != fatal_signals_.end() && it->second == k) {
    fmt::print(stderr, "fault injection: raising SIGSEGV at {}\n", point);
    std::raise(SIGSEGV);
  }
  if (auto it = stops_.find(point); it != stops_.end() && it->second == k) {
    fmt::print(stderr, "fault injection: stopping (SIGSTOP) at {}\n", point);
    std::raise(SIGSTOP);
  }
  if (auto it = throws_.find(point); it != throws_.end() && it->second == k)
    return Status::internal(fmt::format("fault injection: an exception thrown at {} (test)", point));
  return Status::ok_status();
}

}  // namespace cerebro
