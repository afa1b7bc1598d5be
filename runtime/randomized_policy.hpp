#pragma once
// The Cerebro paper's randomized scheduler (Algorithm 1): when a worker is idle,
// shuffle the pending units and run the first whose config is idle and whose
// partition the worker holds. That is the same as picking uniformly at random
// among MopBook::eligible_units(w), which is what this does. Randomness avoids
// the systematic stragglers a fixed order creates when unit times differ.

#include <random>

#include "runtime/scheduling_policy.hpp"

namespace cerebro {

class RandomizedPolicy : public SchedulingPolicy {
 public:
  // Same seed, same book history: same picks.
  explicit RandomizedPolicy(uint64_t seed) : rng_(seed) {}

  std::string name() const override { return "randomized"; }
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override;

 private:
  std::mt19937_64 rng_;
};

}  // namespace cerebro
