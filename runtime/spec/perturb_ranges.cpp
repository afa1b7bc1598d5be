#include "runtime/spec/perturb_ranges.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace cerebro
