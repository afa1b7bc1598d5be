#pragma once
// Test-only fault injection: makes units fail, workers slow, or the process
// crash at a named point, so tests can drive failures through the real code.
// Inert unless BOTH environment variables are set:
//   CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test
//   CEREBRO_FAULTS="rule;rule;..."   with rules
//     fail_unit=C:P:E[:N]   unit (config C, partition P, epoch E) fails its first N attempts (default 1; -1 = always)
//     worker_exit=C:P:E     the worker actor running that unit's first attempt dies
//     slow_worker=W:F       worker W's units take F times as long (F >= 1)
//     crash=POINT[:K]       the process _exits(137) the K-th time (default 1) it reaches POINT
//     fatal_signal=POINT[:K] the same, but the process raises SIGSEGV there, as a crash would
//     stop=POINT[:K]        the process stops itself (SIGSTOP) there: hung, until a SIGCONT or SIGKILL
//     throw=POINT[:K]       an exception is thrown there (a bug's exception, not a crash): crash_point
//                           returns it as an internal Status and the caller, a boundary, throws it
//     damage_state=K        the K-th committed unit's state is stored damaged (fails its checksum)
//     unreadable_state=K    the K-th read of a state fails with an I/O error (the stored state is intact)
// A malformed rule is an error at startup, never ignored.

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "runtime/base/status.hpp"

namespace cerebro {

class FaultInjection {
 public:
  // Parses `rules` (the CEREBRO_FAULTS syntax).
  static Result<FaultInjection> parse(const std::string& rules);
  // The process-wide instance, from the environment (empty when not enabled).
  static const FaultInjection& instance();

  bool enabled() const { return enabled_; }
  // Should this attempt (0-based) of the unit fail?
  bool fail_unit(int32_t config, int32_t partition, int32_t epoch, int32_t attempt) const;
  // Should the worker actor die instead of running this attempt?
  bool worker_exit(int32_t config, int32_t partition, int32_t epoch, int32_t attempt) const;
  // How many times slower worker `w` is (1 when not slowed).
  double slowdown(int32_t worker) const;
  // Should the state of this commit (1-based count in this process) be damaged?
  bool damage_state(int64_t commit) const { return damaged_commits_.count(commit) > 0; }
  // Should this read of a state (1-based count in this process) fail as unreadable?
  bool unreadable_state(int64_t read) const { return unreadable_reads_.count(read) > 0; }
  // Exits the process (or raises SIGSEGV, or stops it) at the K-th arrival
  // at `point`, when a rule says so. A throw rule's arrival returns an
  // internal Status: the caller (actors/, models/, tools/: the core never
  // throws) throws it as cerebro::Error.
  [[nodiscard]] Status crash_point(const std::string& point) const;
  // Would the `ahead`-th next arrival at `point` (1: the next one) exit or
  // raise? A group commit ends its batch there, so that a crash "after the
  // K-th commit" finds exactly K commits durable, as without grouping.
  bool stops_at(const std::string& point, int64_t ahead) const;

 private:
  bool enabled_ = false;
  std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t> failing_units_;
  std::map<int32_t, double> slow_workers_;
  std::set<std::tuple<int32_t, int32_t, int32_t>> exiting_units_;
  std::set<int64_t> damaged_commits_;
  std::set<int64_t> unreadable_reads_;
  std::map<std::string, int64_t> crashes_;
  std::map<std::string, int64_t> fatal_signals_;
  std::map<std::string, int64_t> stops_;
  std::map<std::string, int64_t> throws_;
  mutable std::map<std::string, std::atomic<int64_t>> arrivals_;
};

}  // namespace cerebro
