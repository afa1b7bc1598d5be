#include "runtime/spec/param_value.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace cerebro {
namespace {

using nlohmann::json;

Status space_error(const std::string& key, const std::string& what) {
  return Status::invalid_argument(fmt::format("[space] {} {}", key, what));
}

// A finite number (TOML has inf and nan; neither makes sense as a bound).
bool is_finite_number(const json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

Status check_fields(const std::string& key, const json& entry, const std::set<std::string>& allowed) {
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (allowed.count(it.key()) == 0) {
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      return space_error(key, fmt::format("has an unknown field '{}' for dist = \"{}\" (fields: {})", it.key(),
                                          entry.at("dist").get<std::string>(), names));
    }
  }
  for (const auto& name : allowed) {
    if (!entry.contains(name)) {
      return space_error(key, fmt::format("needs '{}' for dist = \"{}\"", name, entry.at("dist").get<std::string>()));
    }
  }
  return Status::ok_status();
}

Status check_distribution(const std::string& key, const json& entry) {
  const json& dist = entry.at("dist");
  if (!dist.is_string()) {
    return space_error(key, fmt::format("dist must be a string, got {} {}", json_type_name(dist), dist.dump()));
  }
  const std::string name = dist.get<std::string>();
  const std::optional<Distribution> kind = parse_distribution(name);
  if (kind == Distribution::uniform || kind == Distribution::loguniform) {
    if (auto st = check_fields(key, entry, {"dist", "low", "high"}); !st) return st;
    const json& low = entry.at("low");
    const json& high = entry.at("high");
    for (const auto* bound : {&low, &high}) {
      if (!is_finite_number(*bound)) {
        return space_error(key, fmt::format("{} bounds must be finite numbers, got {} {}", name, json_type_name(*bound),
                                            bound->dump()));
      }
    }
    if (!(low.get<double>() < high.get<double>())) {
      return space_error(key, fmt::format("needs low < high, got low = {} and high = {}", low.dump(), high.dump()));
    }
    if (kind == Distribution::loguniform && !(low.get<double>() > 0)) {
      return space_error(key, fmt::format("loguniform needs low > 0, got low = {}", low.dump()));
    }
    return Status::ok_status();
  }
  if (kind == Distribution::int_uniform) {
    if (auto st = check_fields(key, entry, {"dist", "low", "high"}); !st) return st;
    const json& low = entry.at("low");
    const json& high = entry.at("high");
    for (const auto* bound : {&low, &high}) {
      if (!bound->is_number_integer()) {
        return space_error(
            key, fmt::format("int_uniform bounds must be integers, got {} {}", json_type_name(*bound), bound->dump()));
      }
    }
    if (low.get<int64_t>() > high.get<int64_t>()) {
      return space_error(key, fmt::format("needs low <= high, got low = {} and high = {}", low.dump(), high.dump()));
    }
    return Status::ok_status();
  }
  if (kind == Distribution::choice) {
    if (auto st = check_fields(key, entry, {"dist", "values"}); !st) return st;
    const json& values = entry.at("values");
    if (!values.is_array()) {
      return space_error(key,
                         fmt::format("choice values must be a list, got {} {}", json_type_name(values), values.dump()));
    }
    if (values.empty()) return space_error(key, "has an empty choice list: give at least one value");
    return Status::ok_status();
  }
  return space_error(key, fmt::format("has an unknown dist \"{}\" (use uniform, loguniform, "
                                      "int_uniform or choice)",
                                      name));
}

// Levenshtein distance with one row of the table.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool is_distribution(const json& entry) { return entry.is_object() && entry.contains("dist"); }

std::string to_string(Distribution distribution) {
  switch (distribution) {
    case Distribution::uniform: return "uniform";
    case Distribution::loguniform: return "loguniform";
    case Distribution::int_uniform: return "int_uniform";
    case Distribution::choice: return "choice";
  }
  return "unknown";
}

std::optional<Distribution> parse_distribution(const std::string& name) {
  for (Distribution d :
       {Distribution::uniform, Distribution::loguniform, Distribution::int_uniform, Distribution::choice}) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

std::optional<Distribution> distribution_of(const json& entry) {
  if (!is_distribution(entry) || !entry.at("dist").is_string()) return std::nullopt;
  return parse_distribution(entry.at("dist").get<std::string>());
}

Status check_space_entry(const std::string& key, const json& entry, bool allow_distributions) {
  if (entry.is_array()) {
    if (entry.empty()) return space_error(key, "is an empty list: give at least one value");
    return Status::ok_status();
  }
  if (entry.is_object()) {
    if (!is_distribution(entry)) {
      return space_error(key,
                         "is a table without 'dist': give a list of values or a distribution "
                         "such as { dist = \"uniform\", low = 0.0001, high = 0.1 }");
    }
    if (!allow_distributions) {
      return space_error(key,
                         "is a distribution, which only search = \"random\" can sample: "
                         "set search = \"random\" in [experiment] or give a list of values");
    }
    return check_distribution(key, entry);
  }
  if (entry.is_null()) return space_error(key, "has no value");
  return Status::ok_status();  // a scalar: one candidate
}

Status check_space(const json& space, bool allow_distributions) {
  if (!space.is_object() || space.empty()) {
    return Status::invalid_argument(
        "the search space is empty: give at least one hyper-parameter in [space], "
        "e.g. model = [\"mlp\"]");
  }
  for (auto it = space.begin(); it != space.end(); ++it) {
    if (auto st = check_space_entry(it.key(), it.value(), allow_distributions); !st) return st;
  }
  return Status::ok_status();
}

std::string describe_value(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "float";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::array: return "array";
    case json::value_t::object: return "table";
    case json::value_t::null: return "null";
    default: return "value";
  }
}

std::string suggest_name(const std::string& typo, const std::vector<std::string>& known, const std::string& open,
                         const std::string& close) {
  std::string best;
  size_t best_distance = 3;  // more than two edits away is not a typo
  for (const auto& name : known) {
    const size_t d = edit_distance(typo, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  if (!best.empty()) return "did you mean " + open + best + close + "?";
  std::string out = "known: ";
  for (size_t i = 0; i < known.size(); ++i) out += (i ? ", " : "") + open + known[i] + close;
  return out;
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  }
  return out;
}

}  // namespace cerebro
