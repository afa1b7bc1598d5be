#pragma once
// Hyper-parameter values and search-space entries as JSON.
//
// A search space is a JSON object: hyper-parameter name -> entry. An entry is
// either an array of candidate values (each one a concrete value: number,
// string, bool, array, object) or a distribution object for random search:
//   {"dist": "uniform" | "loguniform", "low": <number>, "high": <number>}
//   {"dist": "int_uniform", "low": <integer>, "high": <integer>}   (inclusive)
//   {"dist": "choice", "values": [<value>, ...]}
// A bare scalar entry means a one-element list. These checks are shared by the
// TOML parser (which adds file:line:col) and the search-space expanders.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

// True for a JSON object with a "dist" member (a distribution entry).
bool is_distribution(const nlohmann::json& entry);

// The distributions an entry's "dist" names; the names are only read here.
enum class Distribution { uniform, loguniform, int_uniform, choice };
std::string to_string(Distribution distribution);
std::optional<Distribution> parse_distribution(const std::string& name);
// The distribution of an entry; nullopt for a list, a scalar or an unknown
// "dist" (check_space_entry reports those).
std::optional<Distribution> distribution_of(const nlohmann::json& entry);

// Checks one search-space entry. `key` names the hyper-parameter in messages,
// which read like "[space] lr is an empty list: give at least one value".
// With allow_distributions == false (grid search) a distribution is an error.
Status check_space_entry(const std::string& key, const nlohmann::json& entry, bool allow_distributions);

// Checks a whole space: a non-empty object whose entries all pass check_space_entry.
Status check_space(const nlohmann::json& space, bool allow_distributions);

// A short rendering of a concrete value for logs and messages: strings without
// quotes, numbers in their shortest form, arrays as [256,128].
std::string describe_value(const nlohmann::json& value);

// The JSON type name used in messages: "integer", "float", "string", "boolean",
// "array", "table", "null".
std::string json_type_name(const nlohmann::json& value);

// For a name that is not one of `known` (a misspelt key): "did you mean
// 'search'?" when a known name is at most two edits away, otherwise
// "known: 'a', 'b'". `open`/`close` quote the names ("[" "]" for sections).
std::string suggest_name(const std::string& typo, const std::vector<std::string>& known, const std::string& open = "'",
                         const std::string& close = "'");

// "\"grid\" or \"random\"", "\"a\", \"b\" or \"c\"": the accepted values of an enum key.
std::string quoted_alternatives(const std::vector<std::string>& names);

}  // namespace cerebro
