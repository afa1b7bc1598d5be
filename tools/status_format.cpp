#include "tools/status_format.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "runtime/search/search_space.hpp"
#include "runtime/spec/metric.hpp"
#include "runtime/spec/objective_format.hpp"
#include "runtime/spec/steering_command.hpp"

namespace cerebro::cli {

std::string clock_text(double seconds) {
  auto s = static_cast<long>(seconds + 0.5);
  return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
}

std::optional<ExperimentStatus> experiment_status_of(const nlohmann::json& row) {
  const auto it = row.find("status");
  if (it == row.end() || !it->is_string()) return std::nullopt;
  return parse_experiment_status(it->get<std::string>());
}

std::string format_cluster_status(const nlohmann::json& j) {
  std::string out = fmt::format("coordinator {}\n\nagents:\n", j["listen"].get<std::string>());
  out += fmt::format("  {:<16} {:<28} {:>7} {:>5} {:>9} {:>8}  {}\n", "name", "node", "workers", "cores", "memory",
                     "speed", "state");
  for (const auto& a : j["agents"]) {
    out += fmt::format("  {:<16} {:<28} {:>7} {:>5} {:>7.1f}G {:>8.1f}  {}\n", a["name"].get<std::string>(),
                       a["node"].get<std::string>().substr(0, 28), a["workers"].get<int>(), a["cores"].get<int>(),
                       a["memory_bytes"].get<double>() / (1 << 30), a["speed"].get<double>(),
                       a["state"].get<std::string>());
    for (const auto& unit : a.value("running", nlohmann::json::array()))
      out += fmt::format("      running {}\n", unit.get<std::string>());
  }
  out += "\nexperiments:\n";
  for (const auto& e : j["experiments"]) {
    auto done = e["units_done"].get<int64_t>();
    auto total = e["units_total"].get<int64_t>();
    auto elapsed = e.value("elapsed_s", 0.0);
    std::string eta = "-";
    const bool running = experiment_status_of(e) == ExperimentStatus::running;
    if (running && done > 0 && total >= done)
      eta = clock_text(elapsed / static_cast<double>(done) * static_cast<double>(total - done));
    std::string epoch;
    if (running && e.contains("epoch_low")) {
      auto low = e["epoch_low"].get<int>(), high = e["epoch_high"].get<int>();
      epoch = low == high ? fmt::format("  epoch {}", low) : fmt::format("  epochs {}-{}", low, high);
    }
    out += fmt::format("  {:<40} {:<10} {}/{} units{}  elapsed {}  ETA {}\n", e["id"].get<std::string>(),
                       e["status"].get<std::string>(), done, total, epoch, clock_text(elapsed), eta);
  }
  return out;
}

std::string format_top(const nlohmann::json& top) {
  auto metric = top["metric"].get<std::string>();
  std::string out = fmt::format("experiment {}{}: {} configs\n", top["experiment"].get<std::string>(),
                                top.value("paused", false) ? " (paused)" : "", top["configs"].get<int64_t>());
  out +=
      fmt::format("{:>4}  {:>6}  {:<9}  {:>6}  {:>12}  {}\n", "rank", "config", "status", "epochs", metric, "params");
  for (const auto& r : top["rows"]) {
    auto value = r["metric"].is_null() ? std::string("-") : fmt::format("{:.4f}", r["metric"].get<double>());
    out += fmt::format("{:>4}  {:>6}  {:<9}  {:>6}  {:>12}  {}\n", r["rank"].get<int>(), r["config"].get<int>(),
                       r["status"].get<std::string>(), r["epochs"].get<int>(), value, describe_params(r["params"]));
  }
  if (top.contains("pareto")) out += format_live_pareto(top["pareto"]);
  return out;
}

std::string format_live_pareto(const nlohmann::json& pareto) {
  if (!pareto.is_object()) return {};
  std::vector<std::string> names, later;
  for (const auto& o : pareto["objectives"]) {
    const auto name = o["name"].get<std::string>();
    if (o["live"].get<bool>())
      names.push_back(name + (parse_goal(o["direction"].get<std::string>()) == Goal::maximize ? " max" : " min"));
    else
      later.push_back(name);
  }
  std::string out = fmt::format(
      "Pareto front{} ({}{}): {} config(s)\n", pareto["final"].get<bool>() ? "" : " so far", fmt::join(names, ", "),
      later.empty() ? std::string() : fmt::format("; {} when the run ends", fmt::join(later, ", ")),
      pareto["front"].size());
  out += fmt::format("{:>6}", "config");
  for (const auto& o : pareto["objectives"])
    if (o["live"].get<bool>()) out += fmt::format("  {:>14}", o["name"].get<std::string>());
  out += "\n";
  for (const auto& row : pareto["front"]) {
    out += fmt::format("{:>6}", row["config"].get<int>());
    for (const auto& o : pareto["objectives"])
      if (o["live"].get<bool>())
        out += fmt::format("  {:>14}", format_objective_value(row["values"][o["name"].get<std::string>()].get<double>(),
                                                              o.value("decimals", 4)));
    out += "\n";
  }
  return out;
}

std::string sparkline(const std::vector<double>& values) {
  static const char* blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) return {};
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string out;
  for (double v : values) {
    int level = *hi > *lo ? static_cast<int>(std::lround((v - *lo) / (*hi - *lo) * 7)) : 3;
    out += blocks[std::clamp(level, 0, 7)];
  }
  return out;
}

std::string best_line(const nlohmann::json& summary) {
  const auto& best = summary["best"];
  std::string out = fmt::format("best: config {}", best["id"].get<int>());
  auto value = [&](const std::string& key) {
    return best.contains(key) && best[key].is_number() ? fmt::format(" {} {:.4f}", key, best[key].get<double>())
                                                       : std::string();
  };
  out += value("val_accuracy") + value("test_accuracy");
  const auto metric = summary.value("metric", std::string("val_accuracy"));
  const Quantity ranked = quantity_of_name(metric);
  if (ranked != Quantity::accuracy && ranked != Quantity::loss && metric.rfind("val_", 0) == 0)
    out += value(metric) + value("test_" + metric.substr(4));
  return out;
}

std::string format_config(const nlohmann::json& show) {
  auto metric = show["metric"].get<std::string>();
  std::string out = fmt::format("config {} of experiment {}: {}\n", show["config"].get<int>(),
                                show["experiment"].get<std::string>(), show["status"].get<std::string>());
  if (!show["error"].get<std::string>().empty()) out += fmt::format("  ({})\n", show["error"].get<std::string>());
  out += fmt::format("params: {}\n", describe_params(show["params"]));
  for (const auto& a : show["actions"]) {
    const auto action = parse_steering_command(a.value("action", std::string()));
    if (action == SteeringCommand::add && a["cloned_from"].get<int>() >= 0)
      out +=
          fmt::format("cloned from config {} (its latest weights and optimizer state)\n", a["cloned_from"].get<int>());
    else if (action == SteeringCommand::add)
      out += "added by hand\n";
    else if (action == SteeringCommand::stop)
      out += fmt::format("stopped by hand in epoch {}\n", a["epoch"].get<int>());
  }
  const auto& epochs = show["epochs"];
  if (epochs.empty()) return out + "no epoch has ended yet\n";
  // The run's metric beside the loss (val_accuracy when it ranks by the loss and has it).
  std::string column = metric;
  if (quantity_of_name(metric) == Quantity::loss) {
    const std::string accuracy = Metric::val_accuracy.name();
    column = epochs[0].contains(accuracy) ? accuracy : "";
  }
  out += fmt::format("{:>5}  {:>10}  {:>10}  {:>12}  {:>8}\n", "epoch", "train_loss", "val_loss", column, "seconds");
  std::vector<double> train, measure;
  for (const auto& e : epochs) {
    out += fmt::format("{:>5}  {:>10.4f}  {:>10.4f}  {:>12.4f}  {:>8.2f}\n", e["epoch"].get<int>(),
                       e["train_loss"].get<double>(), e["val_loss"].get<double>(),
                       column.empty() || !e[column].is_number() ? 0.0 : e[column].get<double>(),
                       e["seconds"].get<double>());
    train.push_back(e["train_loss"].get<double>());
    measure.push_back(e[metric].is_number() ? e[metric].get<double>() : std::nan(""));
  }
  auto range = [](const std::vector<double>& v) {
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return fmt::format("{:.4f} .. {:.4f}", *lo, *hi);
  };
  out += fmt::format("learning curve (epoch 0 -> {}):\n", epochs.size() - 1);
  out += fmt::format("  train_loss   {}  {}\n", sparkline(train), range(train));
  out += fmt::format("  {:<12} {}  {}\n", metric, sparkline(measure), range(measure));
  return out;
}

}  // namespace cerebro::cli
