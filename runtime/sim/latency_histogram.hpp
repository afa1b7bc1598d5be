#pragma once
// How long the policy takes to decide, for the simulator's report
// (decision_latency_p50_us / p99_us): used by runtime/sim/simulator_run.cpp.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace cerebro {

// Decision latencies in clock ticks: exact below 100,000 ticks, kept one by
// one above. Ticks are the time-stamp counter on x86-64 (a few ns to read;
// steady_clock costs ~20 ns, a tenth of a decision), calibrated against
// steady_clock over the run; elsewhere they are steady_clock nanoseconds.
class LatencyHistogram {
 public:
  static uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }

  LatencyHistogram() : started_ticks_(ticks()), started_(std::chrono::steady_clock::now()) {}

  void add(uint64_t elapsed_ticks) {
    if (elapsed_ticks < counts_.size()) {
      ++counts_[elapsed_ticks];
    } else {
      slow_.push_back(elapsed_ticks);
    }
    ++total_;
  }
  // Call once, after the last add().
  void calibrate() {
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started_).count();
    uint64_t elapsed = ticks() - started_ticks_;
    ns_per_tick_ = elapsed > 0 ? ns / static_cast<double>(elapsed) : 1;
  }
  double percentile_us(double q) {
    if (total_ == 0) return 0;
    int64_t rank = std::min<int64_t>(total_ - 1, static_cast<int64_t>(q * static_cast<double>(total_)));
    int64_t seen = 0;
    for (size_t t = 0; t < counts_.size(); ++t) {
      seen += counts_[t];
      if (seen > rank) return static_cast<double>(t) * ns_per_tick_ / 1000;
    }
    std::sort(slow_.begin(), slow_.end());
    return static_cast<double>(slow_[rank - seen]) * ns_per_tick_ / 1000;
  }

 private:
  std::vector<int64_t> counts_ = std::vector<int64_t>(100000, 0);
  std::vector<uint64_t> slow_;
  int64_t total_ = 0;
  uint64_t started_ticks_;
  std::chrono::steady_clock::time_point started_;
  double ns_per_tick_ = 1;
};

}  // namespace cerebro
