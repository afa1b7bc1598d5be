#include "runtime/randomized_policy.hpp"

#include <fmt/format.h>

#include "runtime/status.hpp"

namespace cerebro {

std::optional<Unit> RandomizedPolicy::choose(WorkerId w, const MopBook& book) {
  std::vector<Unit> eligible = book.eligible_units(w);
  if (eligible.empty()) return std::nullopt;
  std::uniform_int_distribution<size_t> pick(0, eligible.size() - 1);
  return eligible[pick(rng_)];
}

// The factory lives with the only policy it can build by name; it moves to its
// own file when a second named policy arrives.
std::unique_ptr<SchedulingPolicy> make_policy(const std::string& name, uint64_t seed) {
  if (name == "randomized") return std::make_unique<RandomizedPolicy>(seed);
  throw Error(fmt::format("unknown scheduling policy '{}' (known: randomized)", name));
}

}  // namespace cerebro
