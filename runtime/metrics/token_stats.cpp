#include "runtime/metrics/token_stats.hpp"

#include <cmath>
#include <limits>

namespace cerebro::metrics {

double TokenStats::accuracy() const {
  return tokens > 0 ? static_cast<double>(correct) / static_cast<double>(tokens) : 0.0;
}

double TokenStats::perplexity() const {
  if (tokens <= 0) return std::numeric_limits<double>::infinity();
  return std::exp(negative_log_likelihood / static_cast<double>(tokens));
}

}  // namespace cerebro::metrics
