#include "runtime/store/experiment_result.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

nlohmann::json experiment_result::summary() const {
  if (summary_json.empty()) return nullptr;
  return nlohmann::json::parse(summary_json, nullptr, false);
}

Result<experiment_result> result_from_summary(const std::string& experiment, const std::string& run_dir,
                                              const nlohmann::json& summary) {
  experiment_result r;
  r.experiment = experiment;
  r.run_dir = run_dir;
  bool higher = true;
  // nlohmann's accessors throw for a missing key or a value of the wrong type.
  try {
    r.metric = summary.value("metric", std::string("val_accuracy"));
    r.wall_s = summary.value("wall_s", 0.0);
    r.summary_json = summary.dump(2);
    for (const auto& c : summary.value("configs", nlohmann::json::array())) {
      leaderboard_entry e;
      e.config = c.value("id", ConfigId{0});
      e.params_json = c.value("params", nlohmann::json::object()).dump();
      auto status = config_status_from_json(c.at("status"));
      if (!status.ok())
        return status.status().with_context(fmt::format("{}/summary.json: config {}", run_dir, e.config));
      e.status = *status;
      auto metric = c.value("metric", nlohmann::json());
      e.validated = metric.is_number();
      if (e.validated) e.metric = metric.get<double>();
      r.leaderboard.push_back(std::move(e));
    }
    higher = metric_from_record(r.metric, summary.value("metric_goal", std::string())).higher_is_better();
  } catch (const nlohmann::json::exception& bad) {
    return Status::invalid_argument(fmt::format("{}/summary.json: {}", run_dir, bad.what()));
  }
  // The order of the CLI's leaderboard (rank_configs): ranked best first,
  // then the unranked by id.
  std::stable_sort(r.leaderboard.begin(), r.leaderboard.end(),
                   [&](const leaderboard_entry& a, const leaderboard_entry& b) {
                     if (a.validated != b.validated) return a.validated;
                     if (!a.validated) return a.config < b.config;
                     return higher ? a.metric > b.metric : a.metric < b.metric;
                   });
  return r;
}

experiment_result failed_result(const std::string& experiment, const std::string& run_dir, std::string error) {
  experiment_result r;
  r.experiment = experiment;
  r.run_dir = run_dir;
  r.error = std::move(error);
  return r;
}

std::string format_leaderboard(const experiment_result& result, size_t max_rows) {
  std::string out =
      fmt::format("{:>4}  {:>6}  {:<9}  {:>12}  {}\n", "rank", "config", "status", result.metric, "params");
  size_t rank = 0;
  for (const auto& e : result.leaderboard) {
    if (rank++ >= max_rows) break;
    auto value = e.validated ? fmt::format("{:.4f}", e.metric) : std::string("-");
    auto params = nlohmann::json::parse(e.params_json, nullptr, false);
    out += fmt::format("{:>4}  {:>6}  {:<9}  {:>12}  {}\n", rank, e.config, to_string(e.status), value,
                       params.is_discarded() ? e.params_json : describe_params(params));
  }
  if (result.leaderboard.size() > max_rows) out += fmt::format("  ... {} more\n", result.leaderboard.size() - max_rows);
  return out;
}

}  // namespace cerebro
