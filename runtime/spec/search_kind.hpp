#pragma once
// The search procedures a spec can name ([experiment] search). Only the names
// live here, at the bottom layer, because ExperimentSpec holds the kind; what
// each search accepts, checks and builds is its entry in the search registry
// (runtime/spec/search_registry.hpp).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cerebro {

enum class SearchKind { grid, random, asha, hyperband, pbt, tpe };

// "grid", "random", "asha", "hyperband", "pbt", "tpe": the spelling in specs, JSON and messages.
std::string to_string(SearchKind kind);
std::optional<SearchKind> parse_search_kind(const std::string& name);
std::ostream& operator<<(std::ostream& os, SearchKind kind);

// Every kind in declaration order (grid, the default, first).
const std::vector<SearchKind>& search_kinds();
// Their names, in the same order: the accepted values of [experiment] search.
const std::vector<std::string>& search_names();

}  // namespace cerebro
