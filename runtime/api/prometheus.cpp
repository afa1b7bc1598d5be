#include "runtime/api/prometheus.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/base/lifecycle.hpp"

namespace cerebro::api {

namespace {

const std::vector<double> kUnitBounds = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
const std::vector<double> kHopBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

std::string number(double v) { return fmt::format("{}", v); }

class Writer {
 public:
  void family(const std::string& name, const std::string& type, const std::string& help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const std::string& name, const std::string& labels, double value) {
    out_ += labels.empty() ? fmt::format("{} {}\n", name, number(value))
                           : fmt::format("{}{{{}}} {}\n", name, labels, number(value));
  }
  void histogram(const std::string& name, const std::string& labels, const std::vector<double>& values,
                 const std::vector<double>& bounds) {
    auto counts = cumulative_buckets(values, bounds);
    const std::string sep = labels.empty() ? "" : ",";
    for (size_t i = 0; i < bounds.size(); ++i)
      sample(name + "_bucket", fmt::format("{}{}le=\"{}\"", labels, sep, number(bounds[i])),
             static_cast<double>(counts[i]));
    sample(name + "_bucket", fmt::format("{}{}le=\"+Inf\"", labels, sep), static_cast<double>(values.size()));
    double sum = 0;
    for (double v : values) sum += v;
    sample(name + "_sum", labels, sum);
    sample(name + "_count", labels, static_cast<double>(values.size()));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(const std::string& key, const std::string& value) {
  return fmt::format("{}=\"{}\"", key, escape_label(value));
}

double num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// An experiment the coordinator lists as running (its status word parsed).
bool running(const nlohmann::json& experiment) {
  return parse_experiment_status(text(experiment, "status")) == ExperimentStatus::running;
}

const nlohmann::json& array_at(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

}  // namespace

std::string escape_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::vector<uint64_t> cumulative_buckets(const std::vector<double>& values, const std::vector<double>& bounds) {
  std::vector<uint64_t> counts(bounds.size(), 0);
  for (double v : values)
    for (size_t i = 0; i < bounds.size(); ++i)
      if (v <= bounds[i]) ++counts[i];
  return counts;
}

std::string render_metrics(const nlohmann::json& status, const std::map<std::string, nlohmann::json>& units) {
  Writer w;
  const auto& agents = array_at(status, "agents");
  w.family("cerebro_agents_up", "gauge", "Agents joined to the coordinator and sending heartbeats.");
  w.sample("cerebro_agents_up", "", static_cast<double>(agents.size()));
  w.family("cerebro_agent_workers", "gauge", "Workers an agent hosts.");
  for (const auto& a : agents) w.sample("cerebro_agent_workers", label("agent", text(a, "name")), num(a, "workers"));
  w.family("cerebro_agent_speed", "gauge", "An agent's measured speed (calibration units per second, one thread).");
  for (const auto& a : agents) w.sample("cerebro_agent_speed", label("agent", text(a, "name")), num(a, "speed"));
  w.family("cerebro_agent_busy_workers", "gauge", "An agent's workers running a unit now.");
  for (const auto& a : agents)
    w.sample("cerebro_agent_busy_workers", label("agent", text(a, "name")),
             static_cast<double>(array_at(a, "running").size()));

  const auto& experiments = array_at(status, "experiments");
  auto per_experiment = [&](const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (const auto& e : experiments) w.sample(name, label("experiment", text(e, "id")), value(e));
  };
  per_experiment("cerebro_experiment_progress", "gauge", "Units done over units planned (0 to 1).",
                 [&](const nlohmann::json& e) {
                   double total = num(e, "units_total");
                   return total > 0 ? num(e, "units_done") / total : 0.0;
                 });
  per_experiment("cerebro_experiment_units_total", "gauge", "Units the experiment plans now.",
                 [&](const nlohmann::json& e) { return num(e, "units_total"); });
  per_experiment("cerebro_experiment_running", "gauge", "1 while the experiment runs, else 0.",
                 [&](const nlohmann::json& e) { return running(e) ? 1.0 : 0.0; });
  per_experiment("cerebro_queue_depth", "gauge", "Units waiting to be dispatched (planned, not done, not running).",
                 [&](const nlohmann::json& e) {
                   if (!running(e)) return 0.0;
                   return std::max(0.0, num(e, "units_total") - num(e, "units_done") - num(e, "units_running"));
                 });
  per_experiment("cerebro_units_failed_total", "counter", "Failed unit attempts (each is retried or fails its config).",
                 [&](const nlohmann::json& e) { return num(e, "units_failed"); });

  // From the unit logs.
  struct Derived {
    double completed = 0;
    std::map<int64_t, double> busy;  // worker -> seconds
    std::vector<double> unit_s, hop_s;
  };
  std::map<std::string, Derived> derived;
  for (const auto& e : experiments) {
    auto id = text(e, "id");
    auto& d = derived[id];
    auto it = units.find(id);
    if (it == units.end() || !it->second.is_array()) continue;
    for (const auto& u : it->second) {
      if (u.value("rolled_back", false)) continue;
      // The worker's time: dispatch to its result (its commit runs while it
      // trains its next unit); logs from before result_s have only end_s.
      double worker_end = u.contains("worker_end_s") ? num(u, "worker_end_s") : num(u, "end_s");
      double span = std::max(0.0, worker_end - num(u, "start_s"));
      d.completed += 1;
      d.busy[u.value("worker", int64_t{0})] += span;
      d.unit_s.push_back(span);
      d.hop_s.push_back(std::max(0.0, span - num(u, "train_s") - num(u, "validate_s")));
    }
  }
  w.family("cerebro_units_completed_total", "counter", "Units committed (durable) so far.");
  for (const auto& [id, d] : derived) w.sample("cerebro_units_completed_total", label("experiment", id), d.completed);
  w.family("cerebro_worker_busy_seconds_total", "counter",
           "Seconds a worker spent on committed units (dispatch to result).");
  for (const auto& [id, d] : derived)
    for (const auto& [worker, s] : d.busy)
      w.sample("cerebro_worker_busy_seconds_total",
               label("experiment", id) + "," + label("worker", std::to_string(worker)), s);
  w.family("cerebro_unit_duration_seconds", "histogram",
           "Committed units' dispatch-to-result seconds (a worker's time on them).");
  for (const auto& [id, d] : derived)
    w.histogram("cerebro_unit_duration_seconds", label("experiment", id), d.unit_s, kUnitBounds);
  w.family(
      "cerebro_hop_duration_seconds", "histogram",
      "Seconds of a worker's time on a unit outside training and validation: state fetch, restore, save, messages.");
  for (const auto& [id, d] : derived)
    w.histogram("cerebro_hop_duration_seconds", label("experiment", id), d.hop_s, kHopBounds);
  return w.take();
}

}  // namespace cerebro::api
