#include "runtime/viz/svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cerebro::svg {

namespace {

constexpr double kWidth = 640, kHeight = 300;
constexpr double kLeft = 64, kRight = 16, kTop = 30, kBottom = 42;

std::string num(double v) { return fmt::format("{:.4g}", v); }
std::string px(double v) { return fmt::format("{:.1f}", v); }

// A linear map from [lo, hi] onto [a, b].
struct Scale {
  double lo, hi, a, b;
  double operator()(double v) const { return hi == lo ? (a + b) / 2 : a + (v - lo) / (hi - lo) * (b - a); }
};

// [lo, hi] widened so a flat series still has a visible range.
std::pair<double, double> padded(double lo, double hi) {
  if (hi > lo) {
    double pad = (hi - lo) * 0.05;
    return {lo - pad, hi + pad};
  }
  double pad = std::abs(lo) > 0 ? std::abs(lo) * 0.1 : 0.5;
  return {lo - pad, hi + pad};
}

std::string open_svg(const std::string& id, const std::string& kind, double width, double height,
                     const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" id=\"{}\" data-chart=\"{}\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text class=\"chart-title\" x=\"{}\" y=\"18\">{}</text>\n",
      escape(id), kind, px(width), px(height), px(width), px(height), escape(title), px(kLeft), escape(title));
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string config_color(int config) {
  static const char* const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  if (config >= 0 && config < 10) return palette[config];
  // Beyond the palette: hues a golden angle apart never repeat.
  return fmt::format("hsl({:.0f},65%,42%)", std::fmod(config * 137.508, 360.0));
}

std::vector<double> nice_ticks(double lo, double hi, int about) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  double raw = (hi - lo) / std::max(1, about);
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (magnitude * m >= raw) {
      step = magnitude * m;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string line_chart(const LineChart& chart) {
  double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  bool any = false;
  for (const auto& s : chart.series)
    for (auto [x, y] : s.points) {
      if (!std::isfinite(y)) continue;
      if (!any) xlo = xhi = x, ylo = yhi = y, any = true;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  if (xhi == xlo) xlo -= 0.5, xhi += 0.5;
  std::tie(ylo, yhi) = padded(ylo, yhi);
  Scale sx{xlo, xhi, kLeft, kWidth - kRight}, sy{ylo, yhi, kHeight - kBottom, kTop};
  std::string out = open_svg(chart.id, "lines", kWidth, kHeight, chart.title);
  // Axes, grid and ticks.
  out += fmt::format(
      "<g class=\"axes\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n",
      px(kLeft), px(kHeight - kBottom), px(kWidth - kRight), px(kTop));
  for (double t : nice_ticks(ylo, yhi))
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>\n",
        px(kLeft), px(sy(t)), px(kWidth - kRight), px(kLeft - 6), px(sy(t) + 4), num(t));
  for (double t : nice_ticks(xlo, xhi, 8)) {
    if (chart.integer_x && t != std::floor(t)) continue;
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(sx(t)),
                       px(kHeight - kBottom + 16), num(t));
  }
  out += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     px((kLeft + kWidth - kRight) / 2), px(kHeight - 6), escape(chart.x_label));
  out += fmt::format(
      "<text class=\"label\" transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}"
      "</text></g>\n",
      px((kTop + kHeight - kBottom) / 2), escape(chart.y_label));
  for (const auto& s : chart.series) {
    auto color = config_color(s.config);
    std::string points;
    for (auto [x, y] : s.points)
      if (std::isfinite(y)) points += px(sx(x)) + "," + px(sy(y)) + " ";
    out += fmt::format("<g class=\"series\" data-config=\"{}\"><title>{}</title>\n", s.config, escape(s.label));
    out += fmt::format("<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       color, points);
    for (auto [x, y] : s.points)
      if (std::isfinite(y))
        out += fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", px(sx(x)), px(sy(y)),
                           color);
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

std::string parallel_coordinates(const ParallelChart& chart) {
  const size_t n = chart.axes.size();
  const double width = std::max(kWidth, 170.0 * static_cast<double>(n));
  const double left = 70, right = 70, top = 44, bottom = 30;
  auto axis_x = [&](size_t i) {
    return n <= 1 ? width / 2 : left + (width - left - right) * static_cast<double>(i) / static_cast<double>(n - 1);
  };
  // A value's height on its axis: the top is the largest (categories: the last;
  // a metric where lower is better: the smallest).
  auto axis_y = [&](const ParallelAxis& a, double v) {
    double f;
    if (!a.categories.empty()) {
      f = a.categories.size() == 1 ? 0.5 : v / static_cast<double>(a.categories.size() - 1);
    } else if (a.log && a.lo > 0 && v > 0) {
      f = a.hi == a.lo ? 0.5 : (std::log(v) - std::log(a.lo)) / (std::log(a.hi) - std::log(a.lo));
    } else {
      f = a.hi == a.lo ? 0.5 : (v - a.lo) / (a.hi - a.lo);
    }
    if (!a.higher_is_better) f = 1 - f;
    return (kHeight - bottom) - f * (kHeight - bottom - top);
  };
  std::string out = open_svg(chart.id, "parallel", width, kHeight, chart.title);
  for (size_t i = 0; i < n; ++i) {
    const auto& a = chart.axes[i];
    double x = axis_x(i);
    out += fmt::format(
        "<g class=\"axis\" data-axis=\"{0}\"><line x1=\"{1}\" y1=\"{2}\" x2=\"{1}\" y2=\"{3}\"/>"
        "<text class=\"label\" x=\"{1}\" y=\"{4}\" text-anchor=\"middle\">{0}</text>\n",
        escape(a.name), px(x), px(top), px(kHeight - bottom), px(top - 10));
    std::vector<std::pair<double, std::string>> ticks;
    if (!a.categories.empty()) {
      for (size_t c = 0; c < a.categories.size(); ++c) ticks.push_back({static_cast<double>(c), a.categories[c]});
    } else if (a.log && a.lo > 0) {
      ticks.push_back({a.lo, num(a.lo)});
      if (a.hi != a.lo) ticks.push_back({a.hi, num(a.hi)});
    } else {
      for (double t : nice_ticks(a.lo, a.hi, 4)) ticks.push_back({t, num(t)});
    }
    for (const auto& [v, text] : ticks)
      out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>", px(x + 4), px(axis_y(a, v) + 4),
                         escape(text));
    out += "</g>\n";
  }
  for (const auto& line : chart.lines) {
    std::string points;
    for (size_t i = 0; i < n && i < line.values.size(); ++i)
      if (line.values[i]) points += px(axis_x(i)) + "," + px(axis_y(chart.axes[i], *line.values[i])) + " ";
    out += fmt::format(
        "<g class=\"series\" data-config=\"{}\"><title>{}</title>"
        "<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/></g>\n",
        line.config, escape(line.label), config_color(line.config), points);
  }
  return out + "</svg>\n";
}

std::string gantt(const GanttChart& chart) {
  const double lane_height = 26, top = 30, bottom = 40, left = 90, right = 16;
  const double height = top + bottom + lane_height * static_cast<double>(std::max<size_t>(1, chart.lanes.size()));
  double t0 = chart.t0, t1 = chart.t1 > chart.t0 ? chart.t1 : chart.t0 + 1;
  Scale sx{t0, t1, left, kWidth - right};
  std::string out = open_svg(chart.id, "gantt", kWidth, height, chart.title);
  for (double t : nice_ticks(t0, t1, 8))
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(sx(t)), px(top), px(height - bottom), px(height - bottom + 16), num(t));
  out += fmt::format(
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">seconds since the run started"
      "</text>\n",
      px((left + kWidth - right) / 2), px(height - 6));
  for (size_t lane = 0; lane < chart.lanes.size(); ++lane) {
    double y = top + lane_height * static_cast<double>(lane);
    out += fmt::format(
        "<g class=\"lane\" data-lane=\"{}\"><rect class=\"lane-bg\" x=\"{}\" y=\"{}\" width=\"{}\" "
        "height=\"{}\"/><text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        lane, px(left), px(y + 1), px(kWidth - right - left), px(lane_height - 2), px(left - 6),
        px(y + lane_height / 2 + 4), escape(chart.lanes[lane]));
    for (const auto& bar : chart.bars) {
      if (bar.lane != static_cast<int>(lane)) continue;
      double x0 = sx(bar.start), x1 = std::max(sx(bar.end), x0 + 1.0);  // a unit is never invisible
      out += fmt::format(
          "<rect class=\"unit\" data-config=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\"><title>{}</title></rect>\n",
          bar.config, px(x0), px(y + 4), px(x1 - x0), px(lane_height - 8), config_color(bar.config), escape(bar.label));
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

std::string legend(const std::vector<std::pair<int, std::string>>& configs) {
  std::string out = "<div class=\"legend\">";
  for (const auto& [config, label] : configs)
    out += fmt::format(
        "<span class=\"key\" data-config=\"{}\"><span class=\"swatch\" style=\"background:{}\"></span>"
        "{}</span>",
        config, config_color(config), escape(label));
  return out + "</div>\n";
}

}  // namespace cerebro::svg
