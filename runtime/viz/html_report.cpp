#include "runtime/viz/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "runtime/search/search_space.hpp"
#include "runtime/spec/metric.hpp"
#include "runtime/viz/svg_chart.hpp"

namespace cerebro {

namespace {

using svg::escape;

const char* const kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.facts { color: #555; } .facts b { color: #222; }
table.leaderboard { border-collapse: collapse; font-size: 13px; }
table.leaderboard th, table.leaderboard td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: left; }
table.leaderboard td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.leader { cursor: pointer; } tr.leader:hover { background: #f3f3f3; }
.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 5px; border-radius: 2px; }
.legend { font-size: 12px; margin: 6px 0; } .legend .key { margin-right: 14px; cursor: pointer; white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { background: #fff; border: 1px solid #e3e3e3; font-size: 11px; }
svg .chart-title { font-size: 13px; font-weight: bold; }
svg .axes line, svg .axis line { stroke: #444; } svg .axes line.grid, svg line.grid { stroke: #e8e8e8; }
svg .lane-bg { fill: #f7f7f7; } svg .tick { fill: #555; } svg .label { fill: #333; }
svg .series, svg .unit { cursor: pointer; }
body.highlighting svg .series:not(.hl), body.highlighting svg .unit:not(.hl) { opacity: 0.12; }
body.highlighting tr.leader:not(.hl) { opacity: 0.45; }
.note { color: #777; font-size: 12px; }
.examples { display: flex; flex-wrap: wrap; gap: 16px; }
.examples figure { margin: 0; width: 192px; font-size: 12px; }
.examples svg { border: 1px solid #e3e3e3; display: block; }
.examples rect { fill: none; stroke-width: 0.6; vector-effect: non-scaling-stroke; }
.examples rect.found { stroke: #ff2fa0; stroke-width: 2; }
.examples rect.truth { stroke: #ffffff; stroke-width: 1.5; stroke-dasharray: 4 3; }
)";

// Click a line, a bar, a legend key or a leaderboard row: that config stands
// out everywhere; click it again (or the page) to clear.
const char* const kScript = R"(
document.addEventListener('click', function (event) {
  var mark = event.target.closest('[data-config]');
  var chosen = mark ? mark.getAttribute('data-config') : null;
  if (chosen !== null && document.body.getAttribute('data-highlight') === chosen) chosen = null;
  document.body.classList.toggle('highlighting', chosen !== null);
  document.body.setAttribute('data-highlight', chosen === null ? '' : chosen);
  document.querySelectorAll('[data-config]').forEach(function (el) {
    el.classList.toggle('hl', el.getAttribute('data-config') === chosen);
  });
});
)";

std::string fixed(double v, int digits = 4) { return fmt::format("{:.{}f}", v, digits); }

// The (config, epoch) pairs whose epoch has validated, from one pass over the log.
std::set<std::pair<ConfigId, int32_t>> validated_epochs(const std::vector<UnitLogEntry>& log) {
  std::set<std::pair<ConfigId, int32_t>> out;
  for (const auto& u : log)
    if (u.has_validation) out.insert({u.config, u.epoch});
  return out;
}

std::string facts(const RunView& run) {
  const auto& s = run.summary;
  auto [t0, t1] = log_span(run.log);
  std::string out = "<p class=\"facts\">";
  out += fmt::format(
      "metric <b>{}</b> ({} is better) &middot; <b>{}</b> configs &middot; <b>{}</b> units on <b>{}</b> "
      "workers",
      escape(run.metric), run.metric_higher_is_better ? "higher" : "lower", run.ranked.size(), run.log.size(),
      log_workers(run.log).size());
  if (s.is_object()) {
    if (s.contains("partitions")) out += fmt::format(" &middot; <b>{}</b> partitions", s["partitions"].dump());
    if (s.contains("wall_s") && s["wall_s"].is_number())
      out += fmt::format(" &middot; wall <b>{:.1f} s</b>", s["wall_s"].get<double>());
    if (s.contains("hop_overhead_fraction") && s["hop_overhead_fraction"].is_number())
      out += fmt::format(" &middot; hop overhead <b>{:.1f}%</b>", 100 * s["hop_overhead_fraction"].get<double>());
  } else {
    out += fmt::format(" &middot; units span {:.1f} s &middot; <b>not finished</b> (no summary.json yet)", t1 - t0);
  }
  out += "</p>\n";
  if (s.is_object() && s.contains("best") && s["best"].is_object()) {
    const auto& b = s["best"];
    out += fmt::format("<p class=\"facts\">best: config <b>{}</b> ({})", b.value("id", -1),
                       escape(describe_params(b.value("params", nlohmann::json::object()))));
    for (const char* key : {"val_accuracy", "val_loss", "test_accuracy", "test_loss"})
      if (b.contains(key) && b[key].is_number())
        out += fmt::format(" &middot; {} <b>{}</b>", key, fixed(b[key].get<double>()));
    out += "</p>\n";
  }
  return out;
}

std::string leaderboard(const RunView& run) {
  std::string out = fmt::format(
      "<table class=\"leaderboard\" id=\"leaderboard\"><thead><tr><th>rank</th><th>config</th><th>status</th>"
      "<th>epochs</th><th>{}</th><th>params</th></tr></thead><tbody>\n",
      escape(run.metric));
  int rank = 0;
  for (const auto& c : run.ranked) {
    ++rank;
    out += fmt::format(
        "<tr class=\"leader\" data-config=\"{0}\"><td class=\"num\">{1}</td><td class=\"num\"><span class=\"swatch\" "
        "style=\"background:{2}\"></span>{0}</td><td>{3}</td><td class=\"num\">{4}</td><td class=\"num\">{5}</td>"
        "<td>{6}</td></tr>\n",
        c.id, rank, svg::config_color(c.id), escape(to_string(c.status)), c.epochs.size(),
        c.metric ? fixed(*c.metric) : std::string("&ndash;"), escape(describe_params(c.params)));
  }
  return out + "</tbody></table>\n";
}

std::string learning_curves(const RunView& run) {
  struct Which {
    std::string id;
    std::string title;
    std::function<std::optional<double>(const EpochMetrics&)> value;  // none: the epoch lacks it
    bool needs_validation;
  };
  std::vector<Which> charts = {{"curve-val_accuracy", "validation accuracy",
                                [](const EpochMetrics& e) { return std::optional<double>(e.val_accuracy); }, true},
                               {"curve-val_loss", "validation loss",
                                [](const EpochMetrics& e) { return std::optional<double>(e.val_loss); }, true},
                               {"curve-train_loss", "training loss",
                                [](const EpochMetrics& e) { return std::optional<double>(e.train_loss); }, false}};
  // A task without an accuracy (captioning, detection, a language model, regression) draws no flat line at 0.
  const bool any_accuracy =
      quantity_of_name(run.metric) == Quantity::accuracy ||
      std::any_of(run.ranked.begin(), run.ranked.end(), [](const Standing& c) {
        return std::any_of(c.epochs.begin(), c.epochs.end(), [](const EpochMetrics& e) { return e.val_accuracy != 0; });
      });
  if (!any_accuracy) charts.erase(charts.begin());
  // Another task's (or a template's) metric gets a curve of its own, read by name.
  if (const Quantity ranked = quantity_of_name(run.metric); ranked != Quantity::accuracy && ranked != Quantity::loss) {
    const std::string metric = run.metric;
    charts.push_back({"curve-" + metric, "validation " + metric.substr(metric.rfind("val_", 0) == 0 ? 4 : 0),
                      [metric](const EpochMetrics& e) -> std::optional<double> {
                        for (const auto& [name, value] : named_values(e))
                          if (name == metric) return value;
                        return std::nullopt;
                      },
                      true});
  }
  const auto validated = validated_epochs(run.log);
  std::string out = "<div class=\"charts\">\n";
  // The run's metric first.
  std::vector<const Which*> order;
  for (const auto& w : charts)
    if (run.metric == w.id.substr(6))
      order.insert(order.begin(), &w);
    else
      order.push_back(&w);
  for (const auto* w : order) {
    svg::LineChart chart{w->id, w->title, "epoch", w->title, {}, true};
    for (const auto& c : run.ranked) {
      svg::Series s{c.id, fmt::format("config {}: {}", c.id, describe_params(c.params)), {}};
      for (const auto& e : c.epochs)
        if (!w->needs_validation || validated.count({c.id, e.epoch}))
          if (auto value = w->value(e)) s.points.push_back({static_cast<double>(e.epoch), *value});
      chart.series.push_back(std::move(s));
    }
    out += svg::line_chart(chart);
  }
  return out + "</div>\n";
}

std::string parallel(const RunView& run) {
  // Axes: every hyper-parameter (sorted by name), then the metric.
  std::map<std::string, std::vector<nlohmann::json>> values;
  for (const auto& c : run.ranked)
    if (c.params.is_object())
      for (const auto& [k, v] : c.params.items()) values[k].push_back(v);
  svg::ParallelChart chart{"parallel", "hyper-parameters and " + run.metric, {}, {}};
  std::vector<std::string> keys;
  for (auto& [key, vs] : values) {
    keys.push_back(key);
    svg::ParallelAxis axis;
    axis.name = key;
    if (std::all_of(vs.begin(), vs.end(), [](const nlohmann::json& v) { return v.is_number(); })) {
      axis.lo = axis.hi = vs.front().get<double>();
      for (const auto& v : vs)
        axis.lo = std::min(axis.lo, v.get<double>()), axis.hi = std::max(axis.hi, v.get<double>());
      // Learning rates and the like span decades: a log axis spreads them.
      axis.log = axis.lo > 0 && axis.hi / axis.lo >= 10;
    } else {
      std::set<std::string> seen;
      for (const auto& v : vs) seen.insert(v.is_string() ? v.get<std::string>() : v.dump());
      axis.categories.assign(seen.begin(), seen.end());
    }
    chart.axes.push_back(std::move(axis));
  }
  svg::ParallelAxis metric_axis;
  metric_axis.name = run.metric;
  metric_axis.higher_is_better = run.metric_higher_is_better;
  bool any_metric = false;
  for (const auto& c : run.ranked)
    if (c.metric) {
      if (!any_metric) metric_axis.lo = metric_axis.hi = *c.metric, any_metric = true;
      metric_axis.lo = std::min(metric_axis.lo, *c.metric), metric_axis.hi = std::max(metric_axis.hi, *c.metric);
    }
  chart.axes.push_back(metric_axis);
  for (const auto& c : run.ranked) {
    svg::ParallelLine line{c.id,
                           fmt::format("config {}: {} -> {}", c.id, describe_params(c.params),
                                       c.metric ? fixed(*c.metric) : std::string("no metric")),
                           {}};
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto& axis = chart.axes[i];
      if (!c.params.is_object() || !c.params.contains(keys[i])) {
        line.values.push_back(std::nullopt);
        continue;
      }
      const auto& v = c.params[keys[i]];
      if (axis.categories.empty()) {
        line.values.push_back(v.get<double>());
      } else {
        auto text = v.is_string() ? v.get<std::string>() : v.dump();
        auto at = std::find(axis.categories.begin(), axis.categories.end(), text) - axis.categories.begin();
        line.values.push_back(static_cast<double>(at));
      }
    }
    line.values.push_back(c.metric);
    chart.lines.push_back(std::move(line));
  }
  return svg::parallel_coordinates(chart);
}

std::string schedule(const RunView& run) {
  auto workers = log_workers(run.log);
  auto [t0, t1] = log_span(run.log);
  svg::GanttChart chart{"schedule", "MOP schedule: units per worker over time", {}, {}, std::min(0.0, t0), t1};
  std::map<WorkerId, int> lane_of;
  for (auto w : workers) {
    lane_of[w] = static_cast<int>(chart.lanes.size());
    chart.lanes.push_back(fmt::format("worker {}", w));
  }
  for (const auto& e : run.log)
    chart.bars.push_back(
        {lane_of[e.worker], e.config, e.start_s, e.worker_end_s(),  // the worker's time: its commit runs after
         fmt::format("config {} / partition {} / epoch {} on worker {}: {:.2f}-{:.2f} s (train {:.2f} s)", e.config,
                     e.partition, e.epoch, e.worker, e.start_s, e.end_s, e.train_s)});
  return svg::gantt(chart);
}

// A box as an SVG rectangle in the example's pixels, with its label (and score) above it.
std::string box_svg(const nlohmann::json& box, const char* css_class) {
  std::string label = box.value("label", std::string());
  if (box.contains("score")) label += fmt::format(" {:.2f}", box["score"].get<double>());
  return fmt::format(
      "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"><title>{}</title></rect>",
      css_class, box.value("x", 0.0), box.value("y", 0.0), box.value("width", 0.0), box.value("height", 0.0),
      escape(label));
}

// The best config on a few test images (captioning and detection runs): each picture with its boxes drawn
// on it (the truth dashed) or its caption below it, beside the references.
std::string examples_section(const RunView& run) {
  if (!run.summary.is_object() || !run.summary.contains("best") || !run.summary["best"].is_object()) return "";
  const auto& examples = run.summary["best"].value("examples", nlohmann::json());
  if (!examples.is_array() || examples.empty()) return "";
  std::string out =
      "<h2>The best config on test images</h2>\n<p class=\"note\">What the best model makes of the first test "
      "images: its caption under each, the image's own captions below it; or its boxes (solid, with their "
      "class and score) over the true boxes (dashed).</p>\n<div class=\"examples\">\n";
  for (const auto& e : examples) {
    const auto width = e.value("width", 1), height = e.value("height", 1);
    out += "<figure>";
    out += fmt::format(
        "<svg viewBox=\"0 0 {0} {1}\" width=\"{2}\" height=\"{3}\"><image href=\"{4}\" width=\"{0}\" "
        "height=\"{1}\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\"/>",
        width, height, 192, 192 * height / std::max(1, width), escape(e.value("image", std::string())));
    for (const auto& box : e.value("truth", nlohmann::json::array())) out += box_svg(box, "truth");
    for (const auto& box : e.value("boxes", nlohmann::json::array())) out += box_svg(box, "found");
    out += "</svg><figcaption>";
    if (e.contains("caption")) {
      out += fmt::format("<b>{}</b>", escape(e["caption"].get<std::string>()));
      for (const auto& r : e.value("references", nlohmann::json::array()))
        out += fmt::format("<br><span class=\"note\">{}</span>", escape(r.get<std::string>()));
    } else {
      std::vector<std::string> found;
      for (const auto& box : e.value("boxes", nlohmann::json::array()))
        found.push_back(fmt::format("{} {:.2f}", box.value("label", std::string()), box.value("score", 0.0)));
      out += escape(found.empty() ? std::string("no box") : fmt::format("{}", fmt::join(found, ", ")));
    }
    out += "</figcaption></figure>\n";
  }
  return out + "</div>\n";
}

}  // namespace

std::string render_html_report(const RunView& run) {
  std::vector<std::pair<int, std::string>> keys;
  std::vector<Standing> by_id = run.ranked;
  std::sort(by_id.begin(), by_id.end(), [](const Standing& a, const Standing& b) { return a.id < b.id; });
  for (const auto& c : by_id) keys.push_back({c.id, fmt::format("config {}", c.id)});
  auto legend = svg::legend(keys);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<title>cerebro report: {}</title>\n<style>{}</style></head>\n<body>\n", escape(run.experiment),
                     kStyle);
  out += fmt::format("<h1>cerebro report: {}</h1>\n", escape(run.experiment));
  if (!run.place.empty()) out += fmt::format("<p class=\"note\">run directory {}</p>\n", escape(run.place));
  out += facts(run);
  out += "<h2>Leaderboard</h2>\n" + leaderboard(run);
  out +=
      "<h2>Learning curves</h2>\n<p class=\"note\">One line per config; click a line, a legend key or a "
      "leaderboard row to highlight that config everywhere.</p>\n" +
      legend + learning_curves(run);
  out += "<h2>Hyper-parameters and the metric</h2>\n" + legend + parallel(run);
  out += examples_section(run);
  out +=
      "<h2>MOP schedule</h2>\n<p class=\"note\">Each bar is a unit (one config trained over one partition); a "
      "config's colour moving between lanes is its model hopping to the worker that holds the next partition."
      "</p>\n" +
      legend + schedule(run);
  out += fmt::format("<script>{}</script>\n</body></html>\n", kScript);
  return out;
}

}  // namespace cerebro
