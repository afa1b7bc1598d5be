#include "runtime/spec/objective_format.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cerebro {

int objective_decimals(const Objective& objective, const std::vector<double>& column) {
  if (objective.builtin == BuiltinObjective::parameters) return 0;
  double largest = 0;
  for (double v : column)
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  if (largest == 0) return 4;
  const int magnitude = static_cast<int>(std::floor(std::log10(largest)));
  return std::clamp(3 - magnitude, 0, 8);
}

std::string format_objective_value(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

}  // namespace cerebro
