#include "runtime/store/run_summary.hpp"

#include <map>
#include <set>

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "runtime/search/search_space.hpp"

namespace cerebro {

std::vector<Standing> rank_configs(const std::vector<ConfigRecord>& configs, const std::vector<UnitLogEntry>& log,
                                   const std::string& metric) {
  return rank_configs(configs, log, metric_from_record(metric));
}

Metric stored_metric(const StateStore& store) {
  return metric_from_record(store.get_meta("metric").value_or("val_accuracy"),
                            store.get_meta("metric_goal").value_or(""));
}

void store_metric(StateStore& store, const Metric& metric) {
  store.put_meta("metric", to_string(metric));
  store.put_meta("metric_goal", goal_of(metric));
}

std::vector<std::pair<std::string, double>> named_values(const EpochMetrics& epoch) {
  return validation_values(epoch.val_accuracy, epoch.val_metrics);
}

std::map<ConfigId, std::vector<UnitLogEntry>> units_by_config(const std::vector<UnitLogEntry>& log) {
  std::map<ConfigId, std::vector<UnitLogEntry>> by_config;
  for (const auto& e : log) by_config[e.config].push_back(e);
  return by_config;
}

std::vector<Standing> rank_configs(const std::vector<ConfigRecord>& configs, const std::vector<UnitLogEntry>& log,
                                   const Metric& metric) {
  std::vector<Standing> out;
  const auto by_config = units_by_config(log);
  const std::vector<UnitLogEntry> none;
  for (const auto& c : configs) {
    const auto found = by_config.find(c.id);
    const auto& units = found == by_config.end() ? none : found->second;
    Standing s{c.id, c.status, c.error, c.params, epoch_metrics(units, c.id), std::nullopt};
    for (auto it = s.epochs.rbegin(); it != s.epochs.rend(); ++it) {
      bool validated = std::any_of(units.begin(), units.end(),
                                   [&](const UnitLogEntry& e) { return e.epoch == it->epoch && e.has_validation; });
      if (validated) {
        const double value = metric_value(metric, it->val_loss, it->val_accuracy, it->val_metrics);
        if (!std::isnan(value) || metric.kind() == Quantity::loss) s.metric = value;
        break;
      }
    }
    if (config_failed(c.status)) s.metric.reset();
    out.push_back(std::move(s));
  }
  const bool higher = metric.higher_is_better();
  std::stable_sort(out.begin(), out.end(), [&](const Standing& a, const Standing& b) {
    if (a.metric.has_value() != b.metric.has_value()) return a.metric.has_value();
    if (!a.metric) return a.id < b.id;
    return higher ? *a.metric > *b.metric : *a.metric < *b.metric;
  });
  return out;
}

UnitTimes unit_times(const std::vector<UnitLogEntry>& log, double unit_span_s) {
  UnitTimes t;
  for (const auto& e : log) {
    t.unit_compute_s += e.train_s + e.validate_s;
    t.unit_occupied_s += std::max(0.0, e.worker_end_s() - e.start_s);
  }
  t.unit_span_s = unit_span_s;
  if (t.unit_occupied_s > 0) t.hop_overhead_fraction = std::max(0.0, 1.0 - t.unit_compute_s / t.unit_occupied_s);
  if (t.unit_span_s > 0) t.span_overhead_fraction = std::max(0.0, 1.0 - t.unit_compute_s / t.unit_span_s);
  return t;
}

ScheduleTail schedule_tail(const std::vector<UnitLogEntry>& log, int workers) {
  ScheduleTail t;
  if (log.empty()) return t;
  std::map<WorkerId, double> last_end;
  // (time, +1 at a dispatch / -1 when the result freed the worker); at equal
  // times frees first, so a worker taking its next unit is not counted busy twice.
  std::vector<std::pair<double, int>> events;
  t.first_start_s = log.front().start_s;
  for (const auto& e : log) {
    events.emplace_back(e.start_s, +1);
    events.emplace_back(std::max(e.start_s, e.worker_end_s()), -1);
    t.first_start_s = std::min(t.first_start_s, e.start_s);
    t.last_end_s = std::max(t.last_end_s, e.end_s);
    double& end = last_end[e.worker];
    end = std::max(end, e.worker_end_s());
  }
  if (workers <= 0) workers = static_cast<int>(last_end.size());
  std::sort(events.begin(), events.end());
  // Segments between consecutive event times, with the busy count in each.
  std::vector<std::pair<double, int>> segments;  // (segment start, busy) until the next one
  int busy = 0;
  t.tail_start_s = t.first_start_s;
  for (size_t i = 0; i < events.size(); ++i) {
    busy += events[i].second;
    if (i + 1 < events.size() && events[i + 1].first > events[i].first) {
      segments.emplace_back(events[i].first, busy);
      if (busy >= workers) t.tail_start_s = events[i + 1].first;
    }
  }
  // After the last worker was freed, the last commits still run: idle too.
  if (events.back().first < t.last_end_s) segments.emplace_back(events.back().first, busy);
  for (size_t i = 0; i < segments.size(); ++i) {
    double begin = segments[i].first;
    double end = i + 1 < segments.size() ? segments[i + 1].first : t.last_end_s;
    begin = std::max(begin, t.tail_start_s);
    if (end > begin) t.tail_idle_worker_s += (end - begin) * std::max(0, workers - segments[i].second);
  }
  for (const auto& [w, end] : last_end) t.idle_at_end_s.emplace_back(w, t.last_end_s - end);
  return t;
}

double makespan_over_compute(double wall_s, double unit_compute_s, int workers) {
  return unit_compute_s > 0 && workers > 0 ? wall_s / (unit_compute_s / workers) : 0;
}

nlohmann::json how_trained(const std::vector<UnitLogEntry>& log, ConfigId config) {
  int64_t alone = 0, pipeline_units = 0;
  size_t stages = 0;
  std::map<int32_t, std::set<int64_t>> gangs;  // size -> gang ids
  for (const auto& e : log) {
    if (e.config != config || e.rolled_back) continue;
    if (!e.pipeline_workers.empty()) {
      ++pipeline_units;
      stages = std::max(stages, e.pipeline_workers.size());
    } else if (e.gang > 0) {
      gangs[e.gang_size].insert(e.gang);
    } else {
      ++alone;
    }
  }
  nlohmann::json by_size = nlohmann::json::object();
  int64_t gang_units = 0;
  for (const auto& [size, ids] : gangs) {
    by_size[std::to_string(size)] = ids.size();
    gang_units += static_cast<int64_t>(size) * static_cast<int64_t>(ids.size());
  }
  nlohmann::json out{{"units_alone", alone}, {"gang_units", gang_units}, {"gangs", by_size}};
  if (pipeline_units > 0) {  // Only configs that trained as a pipeline carry the keys
    out["pipeline_units"] = pipeline_units;
    out["pipeline_stages"] = stages;
    out["pipeline"] = fmt::format("pipeline over {} stages", stages);
  }
  return out;
}

nlohmann::json build_summary(const RunFacts& f, const std::vector<Standing>& ranked,
                             const std::vector<UnitLogEntry>& log, const nlohmann::json& best) {
  auto times = unit_times(log, f.unit_span_s);
  // Each unit moves the config's state to its worker and the result back to
  // the checkpoint store: twice the state size.
  int64_t state_bytes_moved = 0;
  for (const auto& e : log) state_bytes_moved += 2 * e.state_bytes;
  nlohmann::json configs = nlohmann::json::array();
  std::vector<Standing> by_id = ranked;
  std::sort(by_id.begin(), by_id.end(), [](const Standing& a, const Standing& b) { return a.id < b.id; });
  for (const auto& s : by_id) {
    nlohmann::json epochs = nlohmann::json::array();
    for (const auto& e : s.epochs) {
      nlohmann::json epoch{
          {"epoch", e.epoch}, {"train_loss", e.train_loss}, {"val_loss", e.val_loss}, {"seconds", e.seconds}};
      for (const auto& [name, value] : named_values(e)) epoch[name] = value;
      epochs.push_back(std::move(epoch));
    }
    // "metric": the config's standing on the leaderboard (null: unranked).
    nlohmann::json entry{{"id", s.id},
                         {"params", s.params},
                         {"status", to_string(s.status)},
                         {"epochs", epochs},
                         {"metric", s.metric ? nlohmann::json(*s.metric) : nlohmann::json(nullptr)}};
    if (!s.error.empty()) entry["error"] = s.error;
    entry["training"] = how_trained(log, s.id);  // MOP units, data-parallel gangs
    configs.push_back(std::move(entry));
  }
  return {{"experiment", f.experiment},
          {"seed", f.seed},
          {"workers", f.workers},
          {"partitions", f.partitions},
          {"epochs", f.epochs},
          {"metric", f.metric},
          {"metric_goal", f.metric_goal},
          {"wall_s", f.wall_s},
          {"units", log.size()},
          {"unit_compute_s", times.unit_compute_s},
          {"unit_span_s", times.unit_span_s},
          {"hop_overhead_fraction", times.hop_overhead_fraction},
          {"unit_occupied_s", times.unit_occupied_s},
          {"span_overhead_fraction", times.span_overhead_fraction},
          {"makespan_over_compute", makespan_over_compute(f.wall_s, times.unit_compute_s, f.workers)},
          {"tail_idle_worker_s", schedule_tail(log, f.workers).tail_idle_worker_s},
          {"state_bytes_moved", state_bytes_moved},
          {"state_bytes_moved_per_epoch", f.epochs > 0 ? state_bytes_moved / f.epochs : 0},
          {"configs", configs},
          {"best", best}};
}

std::string metrics_csv(const std::vector<Standing>& ranked) {
  // The named values' columns: every name any epoch has, in order of first appearance.
  std::vector<std::string> columns;
  for (const auto& s : ranked)
    for (const auto& e : s.epochs)
      for (const auto& [name, value] : named_values(e))
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  if (columns.empty()) columns.push_back("val_accuracy");
  std::string out = "config,epoch,status,train_loss,val_loss";
  for (const auto& c : columns) out += "," + c;
  out += ",seconds,params\n";
  std::vector<Standing> by_id = ranked;
  std::sort(by_id.begin(), by_id.end(), [](const Standing& a, const Standing& b) { return a.id < b.id; });
  for (const auto& s : by_id) {
    auto params = describe_params(s.params);
    std::string quoted = "\"";
    for (char c : params) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += "\"";
    for (const auto& e : s.epochs) {
      out += fmt::format("{},{},{},{:.6f},{:.6f}", s.id, e.epoch, to_string(s.status), e.train_loss, e.val_loss);
      const auto values = named_values(e);
      for (const auto& c : columns) {
        auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == c; });
        out += it == values.end() ? std::string(",") : fmt::format(",{:.6f}", it->second);
      }
      out += fmt::format(",{:.3f},{}\n", e.seconds, quoted);
    }
  }
  return out;
}

std::string format_leaderboard(const std::vector<Standing>& ranked, const std::string& metric, size_t max_rows) {
  std::string out =
      fmt::format("{:>4}  {:>6}  {:<9}  {:>6}  {:>12}  {}\n", "rank", "config", "status", "epochs", metric, "params");
  size_t rank = 0;
  for (const auto& s : ranked) {
    if (rank++ >= max_rows) break;
    auto value = s.metric ? fmt::format("{:.4f}", *s.metric) : std::string("-");
    out += fmt::format("{:>4}  {:>6}  {:<9}  {:>6}  {:>12}  {}\n", rank, s.id, to_string(s.status), s.epochs.size(),
                       value, describe_params(s.params));
  }
  if (ranked.size() > max_rows) out += fmt::format("  ... {} more\n", ranked.size() - max_rows);
  return out;
}

}  // namespace cerebro
