#include "runtime/search/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "runtime/spec/param_value.hpp"
#include "runtime/search/hyperband.hpp"

namespace cerebro {
namespace {

using nlohmann::json;

// The candidates of a list entry; a scalar is a one-element list.
json candidates(const json& entry) { return entry.is_array() ? entry : json::array({entry}); }

// Uniform double in [0, 1) from the top 53 bits of one draw. The standard
// distributions are implementation-defined, so the mapping is spelled out here.
double unit_double(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

// Uniform integer in [0, range) without modulo bias: draws below the
// threshold (2^64 mod range) are rejected. range == 0 means the full 2^64.
uint64_t uniform_below(std::mt19937_64& gen, uint64_t range) {
  if (range == 1) return 0;
  if (range == 0) return gen();
  const uint64_t threshold = (0 - range) % range;
  for (;;) {
    const uint64_t x = gen();
    if (x >= threshold) return x % range;
  }
}

json draw(const json& entry, std::mt19937_64& gen) {
  if (!is_distribution(entry)) {
    const json list = candidates(entry);
    return list[uniform_below(gen, list.size())];
  }
  // sample_random checked the space, so the dist is known.
  const Distribution dist = distribution_of(entry).value_or(Distribution::uniform);
  if (dist == Distribution::choice) {
    const json& values = entry.at("values");
    return values[uniform_below(gen, values.size())];
  }
  if (dist == Distribution::int_uniform) {
    const int64_t low = entry.at("low").get<int64_t>();
    const int64_t high = entry.at("high").get<int64_t>();
    // Unsigned arithmetic: high - low + 1 may not fit in int64_t.
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
    return static_cast<int64_t>(static_cast<uint64_t>(low) + uniform_below(gen, range));
  }
  const double low = entry.at("low").get<double>();
  const double high = entry.at("high").get<double>();
  const double u = unit_double(gen);
  double x;
  if (dist == Distribution::loguniform) {
    x = std::exp(std::log(low) + u * (std::log(high) - std::log(low)));
  } else {
    x = low + u * (high - low);
  }
  // Rounding can land exactly on (or, for exp, just past) a bound: keep [low, high).
  if (x < low) x = low;
  if (x >= high) x = std::nextafter(high, low);
  return x;
}

}  // namespace

Result<std::vector<ConfigParams>> expand_grid(const json& space) {
  if (auto st = check_space(space, /*allow_distributions=*/false); !st) return st;
  std::vector<std::string> keys;
  std::vector<json> lists;
  int64_t total = 1;
  for (auto it = space.begin(); it != space.end(); ++it) {  // nlohmann objects iterate sorted
    keys.push_back(it.key());
    lists.push_back(candidates(it.value()));
    total *= static_cast<int64_t>(lists.back().size());
    if (total > kMaxConfigs) {
      return Status::invalid_argument(fmt::format(
          "[space] the grid has more than {} configs: shorten some lists or use search = \"random\"", kMaxConfigs));
    }
  }
  std::vector<ConfigParams> configs;
  configs.reserve(static_cast<size_t>(total));
  std::vector<size_t> index(keys.size(), 0);  // an odometer over the lists
  for (int64_t id = 0; id < total; ++id) {
    json params = json::object();
    for (size_t k = 0; k < keys.size(); ++k) params[keys[k]] = lists[k][index[k]];
    configs.push_back({static_cast<int32_t>(id), std::move(params)});
    for (size_t k = keys.size(); k-- > 0;) {  // the last key turns fastest
      if (++index[k] < lists[k].size()) break;
      index[k] = 0;
    }
  }
  return configs;
}

Result<std::vector<ConfigParams>> sample_random(const json& space, int samples, uint64_t seed) {
  if (samples < 1) {
    return Status::invalid_argument(
        fmt::format("[experiment] samples must be >= 1 for random search, got {}", samples));
  }
  if (samples > kMaxConfigs) {
    return Status::invalid_argument(fmt::format("[experiment] samples must be <= {}, got {}", kMaxConfigs, samples));
  }
  if (auto st = check_space(space, /*allow_distributions=*/true); !st) return st;
  std::mt19937_64 gen(seed);
  std::vector<ConfigParams> configs;
  configs.reserve(static_cast<size_t>(samples));
  for (int32_t id = 0; id < samples; ++id) {
    json params = json::object();
    for (auto it = space.begin(); it != space.end(); ++it) params[it.key()] = draw(it.value(), gen);
    configs.push_back({id, std::move(params)});
  }
  return configs;
}

Result<std::vector<ConfigParams>> configs_for(const ExperimentSpec& spec) {
  switch (spec.search) {
    case SearchKind::grid: return expand_grid(spec.space);
    case SearchKind::random:
    case SearchKind::asha: return sample_random(spec.space, spec.samples, spec.seed);
    case SearchKind::pbt: return sample_random(spec.space, spec.population, spec.seed);
    case SearchKind::tpe: return std::vector<ConfigParams>{};  // proposed as the search goes (tpe_search.hpp)
    case SearchKind::hyperband: {
      auto counted = hyperband_config_count(spec.max_epochs, spec.eta, spec.brackets);
      if (!counted.ok()) return counted.status().with_context("[experiment]");
      const int64_t count = *counted;
      if (count > kMaxConfigs) {
        return Status::invalid_argument(
            fmt::format("[experiment] hyperband with max_epochs {} and eta {} starts {} configs, "
                        "more than {}",
                        spec.max_epochs, spec.eta, count, kMaxConfigs));
      }
      return sample_random(spec.space, static_cast<int>(count), spec.seed);
    }
  }
  return Status::invalid_argument(fmt::format("[experiment] search must be {}, got kind {}",
                                              quoted_alternatives(search_names()), static_cast<int>(spec.search)));
}

std::string describe_params(const json& params) {
  if (!params.is_object()) return describe_value(params);
  static const std::vector<std::string> first = {"model", "lr", "batch_size", "optimizer"};
  std::vector<std::string> order;
  for (const auto& key : first) {
    if (params.contains(key)) order.push_back(key);
  }
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (std::find(first.begin(), first.end(), it.key()) == first.end()) order.push_back(it.key());
  }
  std::string out;
  for (const auto& key : order) {
    const json& value = params.at(key);
    std::string shown = describe_value(value);
    // A TorchScript file path (the "model" hyper-parameter naming a template) shows as its file name.
    if (value.is_string() && shown.size() > 3 && shown.compare(shown.size() - 3, 3, ".pt") == 0) {
      shown = std::filesystem::path(shown).filename().string();
    }
    if (!out.empty()) out += ' ';
    out += key + "=" + shown;
  }
  return out;
}

}  // namespace cerebro
