#pragma once
// Text renderings shared by `cerebro status` and the REPL: the cluster status
// table, a leaderboard, one config's details with its learning curve.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/lifecycle.hpp"

namespace cerebro::cli {

// Client::status()'s answer as text: agents, then experiments with units
// done of total and an ETA from the rate so far.
std::string format_cluster_status(const nlohmann::json& status);

// Client::top()'s answer as a table, best first.
std::string format_top(const nlohmann::json& top);
// The Pareto front of top's "pareto" (runtime/api/pareto_view.hpp) as a
// table; empty for null (one objective).
std::string format_live_pareto(const nlohmann::json& pareto);

// Client::show()'s answer: parameters, status, per-epoch metrics and the
// learning curves (training loss and the metric) drawn as sparklines.
std::string format_config(const nlohmann::json& show);

// "best: config 3 val_accuracy 0.8712 test_accuracy 0.8650" from a summary.json
// with a best config: accuracy when the task has it, and the run's metric
// (val_r2 / test_r2 ...) when that is another.
std::string best_line(const nlohmann::json& summary);

// A one-line plot of `values`, one block character (▁ to █) per value,
// scaled between their minimum and maximum; empty for no values.
std::string sparkline(const std::vector<double>& values);

// The "status" word of an experiment row of Client::status()'s answer, read
// with the lifecycle parser; nullopt when it is missing or not a known word.
std::optional<ExperimentStatus> experiment_status_of(const nlohmann::json& row);

// "1:02:03" for a number of seconds.
std::string clock_text(double seconds);

}  // namespace cerebro::cli
