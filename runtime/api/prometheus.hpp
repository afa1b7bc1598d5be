#pragma once
// /metrics in Prometheus' text exposition format (version 0.0.4), rendered
// from what the API already reads: the coordinator's status (agents,
// experiments with their progress) and each experiment's unit log. Counters
// are derived from the durable unit log, so they only grow and survive a
// coordinator restart.
//
//   cerebro_agents_up                                  gauge
//   cerebro_agent_workers{agent}, cerebro_agent_speed{agent}, cerebro_agent_busy_workers{agent}
//   cerebro_experiment_progress{experiment}            gauge, units done / total (0..1)
//   cerebro_experiment_units_total{experiment}         gauge, units planned
//   cerebro_experiment_running{experiment}             gauge, 1 while it runs
//   cerebro_queue_depth{experiment}                    gauge, units not done and not running
//   cerebro_units_completed_total{experiment}          counter, committed units
//   cerebro_units_failed_total{experiment}             counter, failed unit attempts (retried)
//   cerebro_worker_busy_seconds_total{experiment,worker}  counter, dispatch-to-result seconds (the worker's time)
//   cerebro_unit_duration_seconds{experiment}          histogram, dispatch to result
//   cerebro_hop_duration_seconds{experiment}           histogram, a unit's span less its
//                                                      training and validation (state fetch,
//                                                      restore, save, messages, commit)

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cerebro::api {

// The content type Prometheus expects for this format.
constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// `status`: the coordinator's status JSON (Client::status); `units`: per
// experiment id, its units_view() "units" array (experiments without one
// count no units).
std::string render_metrics(const nlohmann::json& status, const std::map<std::string, nlohmann::json>& units);

// A label value escaped for the format (backslash, double quote, newline).
std::string escape_label(const std::string& value);

// Cumulative bucket counts of `values` for the upper bounds `bounds`
// (ascending; +Inf is implied and not in the result).
std::vector<uint64_t> cumulative_buckets(const std::vector<double>& values, const std::vector<double>& bounds);

}  // namespace cerebro::api
