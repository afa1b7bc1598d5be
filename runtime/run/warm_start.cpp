#include "runtime/run/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/run/run_recovery.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

// The [space] keys on which two spaces differ, sorted.
std::vector<std::string> differing_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<std::string> keys;
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key()) || b.at(it.key()) != it.value()) keys.push_back(it.key());
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key())) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

Result<std::vector<WarmConfig>> load_warm_start(const ExperimentSpec& spec) {
  std::vector<WarmConfig> out;
  for (const auto& dir : spec.warm_start) {
    auto where = [&](const std::string& text) {
      return Status::invalid_argument(fmt::format("[experiment] warm_start: {}: {}", dir, text));
    };
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return where("no such run directory");
    if (!fs::is_directory(fs::path(dir) / "state", ec)) return where("not a run directory (it has no state/)");
    auto store = StateStore::open((fs::path(dir) / "state").string(), false);
    if (!store.ok()) return where(store.error());
    auto earlier = spec_of_run(**store, dir);
    if (!earlier.ok()) return where("cannot read its spec: " + earlier.error());
    if (earlier->space != spec.space) {
      return where(
          fmt::format("it searched another [space] (keys that differ: {}); warm start needs the same "
                      "space, key for key",
                      fmt::join(differing_keys(earlier->space, spec.space), ", ")));
    }
    const auto log = (*store)->unit_log();
    for (const auto& record : (*store)->configs()) {
      if (record.status == ConfigStatus::failed || record.status == ConfigStatus::running) continue;
      WarmConfig w{dir, record.id, record.params, -std::numeric_limits<double>::infinity()};
      if (record.status != ConfigStatus::diverged) {
        bool validated = false;
        for (const auto& e : log) {
          if (e.config != record.id || !e.has_validation) continue;
          const double value = metric_value(spec.metric, e.val_loss, e.val_accuracy, e.val_metrics);
          const double score = spec.metric.higher_is_better() ? value : -value;
          w.score = std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
          validated = true;
        }
        if (!validated) continue;
      }
      out.push_back(std::move(w));
    }
  }
  return out;
}

Status resolve_warm_start_ids(ExperimentSpec& spec, const ExperimentLookup& experiment) {
  // A spec built in code (not parsed) has no entries as written: directories only.
  if (spec.warm_start_as_written.size() != spec.warm_start.size()) return Status::ok_status();
  for (size_t i = 0; i < spec.warm_start.size(); ++i) {
    const std::string& written = spec.warm_start_as_written[i];
    if (written.empty() || written.find('/') != std::string::npos) continue;
    if (auto known = experiment(written)) {
      if (!known->finished)
        return Status::invalid_argument(fmt::format(
            "[experiment] warm_start: experiment \"{}\" has not finished: warm start reads finished runs", written));
      spec.warm_start[i] = known->run_dir;
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(spec.warm_start[i], ec)) continue;
    return Status::invalid_argument(
        fmt::format("[experiment] warm_start: \"{}\" is neither an experiment of this "
                    "coordinator (see cerebro status) nor a run directory",
                    written));
  }
  return Status::ok_status();
}

nlohmann::json to_json(const std::vector<WarmConfig>& warm) {
  nlohmann::json out = nlohmann::json::array();
  // JSON has no infinity: a diverged config's score is null.
  for (const auto& w : warm)
    out.push_back({{"run_dir", w.run_dir},
                   {"config", w.id},
                   {"params", w.params},
                   {"score", std::isfinite(w.score) ? nlohmann::json(w.score) : nlohmann::json(nullptr)}});
  return out;
}

Result<std::vector<WarmConfig>> warm_configs_from_json(const nlohmann::json& j) {
  if (!j.is_array()) return Status::invalid_argument("the stored warm start is not a list of configs");
  std::vector<WarmConfig> out;
  // nlohmann's accessors throw for a missing key or a value of the wrong type.
  try {
    for (const auto& item : j) {
      WarmConfig w{item.at("run_dir").get<std::string>(), item.at("config").get<ConfigId>(), item.at("params"),
                   -std::numeric_limits<double>::infinity()};
      if (item.at("score").is_number()) w.score = item.at("score").get<double>();
      out.push_back(std::move(w));
    }
  } catch (const nlohmann::json::exception& bad) {
    return Status::invalid_argument(fmt::format("the stored warm start: {}", bad.what()));
  }
  return out;
}

std::vector<TpeObservation> warm_observations(const std::vector<WarmConfig>& warm) {
  std::vector<TpeObservation> out;
  for (const auto& w : warm) out.push_back({w.params, {w.score}});
  return out;
}

std::vector<std::pair<ConfigId, WarmConfig>> seed_configs(std::vector<ConfigParams>& configs,
                                                          const std::vector<WarmConfig>& warm) {
  std::vector<const WarmConfig*> best;
  for (const auto& w : warm)
    if (std::isfinite(w.score)) best.push_back(&w);
  std::stable_sort(best.begin(), best.end(),
                   [](const WarmConfig* a, const WarmConfig* b) { return a->score > b->score; });
  const size_t places = std::min(best.size(), (configs.size() + 1) / 2);
  std::vector<std::pair<ConfigId, WarmConfig>> seeded;
  for (size_t i = 0; i < places; ++i) {
    configs[i].params = best[i]->params;
    seeded.emplace_back(configs[i].id, *best[i]);
  }
  return seeded;
}

const WarmConfig* find_warm_config(const std::vector<WarmConfig>& warm, const nlohmann::json& params) {
  const WarmConfig* found = nullptr;
  for (const auto& w : warm)
    if (w.params == params && (!found || w.score > found->score)) found = &w;
  return found;
}

}  // namespace cerebro
