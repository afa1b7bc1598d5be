#pragma once
// The Cerebro paper's randomized scheduler (Algorithm 1): when a worker is idle,
// shuffle the pending units and run the first whose config is idle and whose
// partition the worker holds. That is the same as picking uniformly at random
// among MopBook::eligible_units(w), which is what this does. Randomness avoids
// the systematic stragglers a fixed order creates when unit times differ.

#include <cstdint>
#include <vector>

#include "runtime/scheduling/scheduling_policy.hpp"

namespace cerebro {

// splitmix64: a tiny, fast generator. A scheduler draws several numbers per
// decision and the simulator makes 1e8 decisions; mt19937_64 and
// std::uniform_int_distribution (a division per draw) were a tenth of that.
class SplitMix64 {
 public:
  using result_type = uint64_t;
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }
  uint64_t operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Exactly uniform in [0, n), n > 0: the high half of a 128-bit product,
  // redrawn in the rare case the low half falls in the biased range.
  uint64_t below(uint64_t n) {
    for (;;) {
      unsigned __int128 product = static_cast<unsigned __int128>((*this)()) * n;
      uint64_t low = static_cast<uint64_t>(product);
      if (low >= n || low >= (0 - n) % n) return static_cast<uint64_t>(product >> 64);
    }
  }

 private:
  uint64_t state_;
};

class RandomizedPolicy : public SchedulingPolicy {
 public:
  // Same seed, same book history: same picks.
  explicit RandomizedPolicy(uint64_t seed) : rng_(seed) {}

  std::string name() const override { return "randomized"; }
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override;

 private:
  SplitMix64 rng_;
  std::vector<int32_t> idle_counts_;  // scratch: per held partition
};

}  // namespace cerebro
