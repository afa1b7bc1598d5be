#include "runtime/base/fault_injection.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <sstream>
#include <vector>

#include <fmt/format.h>

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

}  // namespace

Result<FaultInjection> FaultInjection::parse(const std::string& rules) {
  FaultInjection f;
  f.enabled_ = true;
  for (const auto& rule : split(rules, ';')) {
    auto eq = rule.find('=');
    if (eq == std::string::npos) return Status::invalid_argument(fmt::format("fault rule \"{}\" has no '='", rule));
    auto kind = rule.substr(0, eq);
    auto args = split(rule.substr(eq + 1), ':');
    try {
      // The rule names are compared only here, the one parse of CEREBRO_FAULTS.
      if (kind == "fail_unit" && (args.size() == 3 || args.size() == 4)) {
        f.failing_units_[{std::stoi(args[0]), std::stoi(args[1]), std::stoi(args[2])}] =
            args.size() == 4 ? std::stoi(args[3]) : 1;
      } else if (kind == "damage_state" && args.size() == 1) {
        f.damaged_commits_.insert(std::stoll(args[0]));
      } else if (kind == "unreadable_state" && args.size() == 1) {
        f.unreadable_reads_.insert(std::stoll(args[0]));
      } else if (kind == "worker_exit" && args.size() == 3) {
        f.exiting_units_.insert({std::stoi(args[0]), std::stoi(args[1]), std::stoi(args[2])});
      } else if (kind == "slow_worker" && args.size() == 2 && std::stod(args[1]) >= 1) {
        f.slow_workers_[std::stoi(args[0])] = std::stod(args[1]);
      } else if (kind == "crash" && (args.size() == 1 || args.size() == 2)) {
        f.crashes_[args[0]] = args.size() == 2 ? std::stoll(args[1]) : 1;
        f.arrivals_[args[0]] = 0;
      } else if (kind == "fatal_signal" && (args.size() == 1 || args.size() == 2)) {
        f.fatal_signals_[args[0]] = args.size() == 2 ? std::stoll(args[1]) : 1;
        f.arrivals_[args[0]] = 0;
      } else if (kind == "stop" && (args.size() == 1 || args.size() == 2)) {
        f.stops_[args[0]] = args.size() == 2 ? std::stoll(args[1]) : 1;
        f.arrivals_[args[0]] = 0;
      } else if (kind == "throw" && (args.size() == 1 || args.size() == 2)) {
        f.throws_[args[0]] = args.size() == 2 ? std::stoll(args[1]) : 1;
        f.arrivals_[args[0]] = 0;
      } else {
        return Status::invalid_argument(
            fmt::format("fault rule \"{}\" is not one of fail_unit=C:P:E[:N], worker_exit=C:P:E, damage_state=K, "
                        "unreadable_state=K, slow_worker=W:F (F >= 1), crash=POINT[:K], fatal_signal=POINT[:K], "
                        "stop=POINT[:K], throw=POINT[:K]",
                        rule));
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
