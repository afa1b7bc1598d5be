#include "runtime/search/pbt.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "runtime/spec/param_value.hpp"

namespace cerebro {

using nlohmann::json;

Status PbtProcedure::check(const PbtOptions& options, const std::vector<ConfigParams>& population) {
  const bool perturb_ok = !options.perturb.empty() && std::all_of(options.perturb.begin(), options.perturb.end(),
                                                                  [](double f) { return std::isfinite(f) && f > 0; });
  if (options.epochs < 1 || options.ready < 1 || !(options.exploit_fraction > 0) || options.exploit_fraction > 0.5 ||
      !perturb_ok) {
    return Status::invalid_argument(
        fmt::format("pbt: needs epochs >= 1, ready >= 1, exploit_fraction in (0, 0.5] and "
                    "positive perturb factors, got {}, {}, {} and {} factors",
                    options.epochs, options.ready, options.exploit_fraction, options.perturb.size()));
  }
  std::set<ConfigId> ids;
  for (const auto& member : population) {
    if (!ids.insert(member.id).second)
      return Status::invalid_argument(fmt::format("pbt: config {} is in the population twice", member.id));
  }
  return Status::ok_status();
}

Result<std::unique_ptr<PbtProcedure>> PbtProcedure::create(PbtOptions options,
                                                           const std::vector<ConfigParams>& population) {
  if (auto checked = check(options, population); !checked.ok()) return checked;
  return std::make_unique<PbtProcedure>(std::move(options), population);
}

PbtProcedure::PbtProcedure(PbtOptions options, const std::vector<ConfigParams>& population)
    : options_(std::move(options)), rng_(options_.seed) {
  if (auto checked = check(options_, population); !checked.ok()) contract_violation("PbtProcedure", checked.message());
  for (const auto& member : population) params_.emplace(member.id, member.params);
}

const json& PbtProcedure::params(ConfigId config) const {
  auto it = params_.find(config);
  if (it == params_.end())
    contract_violation("PbtProcedure", fmt::format("pbt: config {} is not in the population", config));
  return it->second;
}

uint64_t PbtProcedure::draw_below(uint64_t n) {
  // Rejection sampling on raw draws: the same on every platform, unlike std's distributions.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t x = rng_();
    if (x >= threshold) return x % n;
  }
}

json PbtProcedure::perturbed(const json& params) {
  json out = params;
  for (const auto& [key, range] : options_.ranges) {  // sorted keys: a fixed draw order
    if (!out.contains(key) || !out.at(key).is_number()) continue;
    const double factor = options_.perturb[draw_below(options_.perturb.size())];
    double x = std::clamp(out.at(key).get<double>() * factor, range.low, range.high);
    if (range.integer) {
      out[key] = static_cast<int64_t>(std::llround(x));
    } else {
      out[key] = x;
    }
  }
  return out;
}

std::vector<SearchDecision> PbtProcedure::decide(const EpochOutcome& o) {
  params(o.config);  // a contract violation for a config outside the population
  latest_[o.config] = Score{metric_score(o, options_.metric), o.epoch};
  const int32_t trained = o.epoch + 1;
  if (trained >= options_.epochs || trained % options_.ready != 0) {
    return {SearchDecision::continue_training(o.config, o.epoch)};
  }
  std::vector<std::pair<double, ConfigId>> ranked;  // best first, ties in config order
  for (const auto& [config, score] : latest_) ranked.emplace_back(score.value, config);
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  const size_t members = ranked.size();
  if (members < 2) {
    return {SearchDecision::continue_training(o.config, o.epoch, "ready, but no other member has a score yet")};
  }
  const size_t q =
      std::max<size_t>(1, static_cast<size_t>(std::floor(static_cast<double>(members) * options_.exploit_fraction)));
  const size_t rank = static_cast<size_t>(
      std::find_if(ranked.begin(), ranked.end(), [&](const auto& r) { return r.second == o.config; }) - ranked.begin());
  if (rank < members - q) {
    return {SearchDecision::continue_training(
        o.config, o.epoch, fmt::format("ready: rank {} of {}, not in the bottom {}", rank + 1, members, q))};
  }
  const size_t pick = static_cast<size_t>(draw_below(q));  // one of ranks 0 .. q-1, never this member
  const ConfigId source = ranked[pick].second;
  const Score source_score = latest_.at(source);
  json next = perturbed(params_.at(source));
  std::string changes;
  for (const auto& [key, range] : options_.ranges) {
    if (!next.contains(key)) continue;
    changes += fmt::format(" {} {}->{}", key, describe_value(params_.at(source).at(key)), describe_value(next.at(key)));
  }
  std::string reason = fmt::format("rank {} of {} is in the bottom {}: copies rank {} (config {}), perturbs{}",
                                   rank + 1, members, q, pick + 1, source, changes.empty() ? " nothing" : changes);
  params_[o.config] = next;
  latest_.erase(o.config);
  return {SearchDecision::exploit(o.config, o.epoch, source, source_score.epoch, std::move(next), std::move(reason))};
}

std::vector<SearchDecision> PbtProcedure::on_config_ended(ConfigId config) {
  latest_.erase(config);
  return {};
}

}  // namespace cerebro
