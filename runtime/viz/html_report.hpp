#pragma once
// `cerebro report`: one self-contained HTML page about a run, for sharing a
// finished one. Everything is inline (SVG charts drawn by svg_chart, the
// style sheet, a few lines of script to highlight a config on click); the
// page makes no request of any kind. Sections:
//   - the facts (experiment, metric, workers, units, wall time, the best config)
//   - the leaderboard by the run's metric
//   - learning curves: the metric, validation loss and training loss per
//     epoch, one line per config
//   - parallel coordinates: every hyper-parameter and the metric, one line
//     per config
//   - the MOP schedule: a Gantt chart of the units, one lane per worker,
//     coloured by config (the hops are visible as a config's colour moving
//     between lanes)

#include <string>

#include "runtime/viz/run_view.hpp"

namespace cerebro {

std::string render_html_report(const RunView& run);

}  // namespace cerebro
