#include "runtime/search/pbt.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "runtime/spec/param_value.hpp"

namespace cerebro {

using nlohmann::json;

namespace {

struct EntryFacts {
  bool numeric = false;    // every value is a number
  bool has_float = false;  // some value is a float (or a float distribution)
  PerturbRange range;
};

bool is_number(const json& v) { return v.is_number_integer() || v.is_number_float(); }

EntryFacts facts_of(const json& entry) {
  EntryFacts f;
  if (is_distribution(entry)) {
    const std::optional<Distribution> dist = distribution_of(entry);
    if (!dist) return f;
    if (*dist == Distribution::choice) return entry.contains("values") ? facts_of(entry.at("values")) : f;
    const bool integral = *dist == Distribution::int_uniform;
    f.numeric = true;
    f.has_float = !integral;
    f.range = {entry.at("low").get<double>(), entry.at("high").get<double>(), integral};
    return f;
  }
  const json values = entry.is_array() ? entry : json::array({entry});
  if (values.empty()) return f;
  f.numeric = true;
  f.range = {INFINITY, -INFINITY, true};
  for (const auto& v : values) {
    if (!is_number(v)) return EntryFacts{};
    const double x = v.get<double>();
    f.range.low = std::min(f.range.low, x);
    f.range.high = std::max(f.range.high, x);
    if (v.is_number_float()) {
      f.has_float = true;
      f.range.integer = false;
    }
  }
  return f;
}

}  // namespace

Result<std::map<std::string, PerturbRange>> perturb_ranges(const json& space, const std::vector<std::string>& keys) {
  std::map<std::string, PerturbRange> out;
  if (!space.is_object()) return Status::invalid_argument("[space] must be a table of hyper-parameters");
  if (keys.empty()) {
    for (auto it = space.begin(); it != space.end(); ++it) {
      const EntryFacts f = facts_of(it.value());
      if (f.numeric && f.has_float && f.range.low < f.range.high) out[it.key()] = f.range;
    }
    if (out.empty()) {
      return Status::invalid_argument(
          "[experiment] search = \"pbt\" has nothing to perturb: [space] has no float range (a uniform or "
          "loguniform distribution, or a list of floats such as lr = [1e-3, 1e-4]); give one, or name the "
          "hyper-parameters in perturb_keys");
    }
    return out;
  }
  for (const auto& key : keys) {
    if (out.count(key)) return Status::invalid_argument(fmt::format("[experiment] perturb_keys names '{}' twice", key));
    if (!space.contains(key)) {
      std::vector<std::string> known;
      for (auto it = space.begin(); it != space.end(); ++it) known.push_back(it.key());
      return Status::invalid_argument(fmt::format("[experiment] perturb_keys names '{}', which is not in [space] ({})",
                                                  key, suggest_name(key, known)));
    }
    const EntryFacts f = facts_of(space.at(key));
    if (!f.numeric) {
      return Status::invalid_argument(
          fmt::format("[experiment] perturb_keys names '{}', which is not numeric in [space]", key));
    }
    if (!(f.range.low < f.range.high)) {
      return Status::invalid_argument(
          fmt::format("[experiment] perturb_keys names '{}', which has a single value in [space]: give it a range to "
                      "perturb within (a list of values or a uniform distribution)",
                      key));
    }
    out[key] = f.range;
  }
  return out;
}

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
    if (!out.contains(key) || !is_number(out.at(key))) continue;
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
