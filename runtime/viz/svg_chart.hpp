#pragma once
// Charts as inline SVG text, drawn by plain code (no script, no fonts or
// files fetched): a line chart, a parallel-coordinates plot and a Gantt
// chart. Every mark that belongs to a config carries data-config="<id>" and
// class "series" (lines) or "unit" (Gantt bars), every Gantt lane
// class "lane" and data-lane="<index>", so a page script can highlight a
// config and a test can count what was drawn. Hovering a mark shows its
// <title>.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cerebro::svg {

// Text made safe for XML content and attribute values.
std::string escape(const std::string& text);

// A config's colour: distinct for neighbouring ids, stable across charts.
std::string config_color(int config);

// "Nice" axis ticks (steps of 1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int about = 5);

struct Series {
  int config = 0;
  std::string label;                              // shown in the hover title
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct LineChart {
  std::string id;  // the <svg>'s id
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool integer_x = true;  // epochs: ticks at whole numbers only
};
std::string line_chart(const LineChart& chart);

// One vertical axis of a parallel-coordinates plot.
struct ParallelAxis {
  std::string name;
  // Categorical: the values in order, drawn evenly spaced. Otherwise numeric
  // from lo to hi (log-scaled when `log`).
  std::vector<std::string> categories;
  double lo = 0, hi = 1;
  bool log = false;
  bool higher_is_better = true;  // for the metric axis: best at the top
};
struct ParallelLine {
  int config = 0;
  std::string label;
  // Per axis: a category index (categorical axis) or a value; none: missing.
  std::vector<std::optional<double>> values;
};
struct ParallelChart {
  std::string id, title;
  std::vector<ParallelAxis> axes;
  std::vector<ParallelLine> lines;
};
std::string parallel_coordinates(const ParallelChart& chart);

struct GanttBar {
  int lane = 0;  // index into lanes
  int config = 0;
  double start = 0, end = 0;
  std::string label;
};
struct GanttChart {
  std::string id, title;
  std::vector<std::string> lanes;  // top to bottom
  std::vector<GanttBar> bars;
  double t0 = 0, t1 = 1;  // the time axis, seconds
};
std::string gantt(const GanttChart& chart);

// A legend: one swatch per config, each with data-config.
std::string legend(const std::vector<std::pair<int, std::string>>& configs);

}  // namespace cerebro::svg
