#pragma once
// How one objective's column of a Pareto table is printed (the
// dashboard, the REPL's top and the table after a run printed 0.690000 beside
// 50890.0 beside 0.00121062): every value of the column with the same number
// of decimals, enough for 4 significant digits of its largest magnitude
// (0.6900 / 0.6512, 12.35 / 140.20, 0.001211 / 0.003500) and at most 8;
// parameters as integers. The HTTP API hands it to the dashboard as each
// objective's "decimals" (runtime/api/pareto_view.hpp), so every table
// follows this one rule.

#include <string>
#include <vector>

#include "runtime/spec/objective.hpp"

namespace cerebro {

int objective_decimals(const Objective& objective, const std::vector<double>& column);
// `value` with `decimals` decimals ("-" when it is not finite).
std::string format_objective_value(double value, int decimals);

}  // namespace cerebro
