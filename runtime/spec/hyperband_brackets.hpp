#pragma once
// Hyperband's bracket arithmetic (runtime/search/hyperband.hpp has the paper's
// formulas): which brackets, rung sizes and epochs a max_epochs and eta give.
// Plain integer arithmetic, in the spec layer so that the spec's checks
// (search_registry.hpp) can refuse a hyperband that cannot run before any
// search is built.

#include <cstdint>
#include <vector>

#include "runtime/base/status.hpp"

namespace cerebro {

struct HyperbandBracket {
  int32_t s = 0;                // the paper's bracket index
  std::vector<int32_t> sizes;   // n_i: configs at rung i (sizes[0] start the bracket)
  std::vector<int32_t> epochs;  // r_i: epochs trained at rung i (the last is max_epochs)
};

// s_max + 1: the number of brackets for this R and eta; invalid_argument
// unless max_epochs >= 1 and eta >= 2.
Result<int32_t> hyperband_max_brackets(int32_t max_epochs, int32_t eta);
// The brackets in the paper's order, s = s_max downward. `brackets` (1 ..
// s_max + 1, 0 = all) keeps that many from the start. invalid_argument for
// values out of range.
Result<std::vector<HyperbandBracket>> hyperband_brackets(int32_t max_epochs, int32_t eta, int32_t brackets = 0);
// The configs all those brackets start: the sum of their sizes[0].
Result<int64_t> hyperband_config_count(int32_t max_epochs, int32_t eta, int32_t brackets = 0);

}  // namespace cerebro
