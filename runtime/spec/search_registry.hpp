#pragma once
// The search registry: one entry per search procedure ([experiment] search),
// with the search-specific [experiment] keys it accepts and the checks it
// makes on them. The spec parser (spec.hpp) reads and type-checks every key
// but knows no search's rules; search_checks() hands it these, and
// parse_spec_file and parse_spec_string parse with them. What the checks
// compute of hyperband and PBT is here too (hyperband_brackets.hpp,
// perturb_ranges.hpp), so that the spec layer needs nothing of the searches
// above it. Building a search's configs
// and procedure is configs_for (search_space.hpp) and make_search_procedure
// (factory.hpp), a switch over the same kinds.
//
// A new search: a SearchKind value (runtime/spec/search_kind.hpp), an entry
// here, its case in configs_for and make_search_procedure, and a test.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/spec/search_kind.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

struct SearchInfo {
  SearchKind kind;
  std::string description;  // one line: what the search does
  // The search-specific [experiment] keys it accepts (runtime/spec/spec.hpp
  // ExperimentSpec); any other search-specific key is an error.
  std::vector<std::string> keys;
  // Why a key it does not accept makes no sense for it, where that helps, e.g.
  // samples with grid: " (a grid tries every combination)".
  std::map<std::string, std::string> misplaced_key_hints;
  // Draws its configs from the space (distributions allowed); grid enumerates lists.
  bool samples_space = true;
  // Trains every config for its planned epochs and nothing else, so configs
  // added while it runs (steering `add` and `clone`) fit it.
  bool takes_added_configs = false;
  // Its checks of [experiment], after the generic ones; may derive fields.
  std::function<void(ExperimentKeys&, ExperimentSpec&)> check_experiment;
  // Its checks once a clean [space] is parsed; may be empty.
  std::function<void(ExperimentKeys&, const ExperimentSpec&)> check_space;
};

// Every search, in SearchKind order.
const std::vector<SearchInfo>& search_registry();
const SearchInfo& search_info(SearchKind kind);

// The checks the spec parser runs with (parse_spec_string_with): for the
// spec's search, "applies only to search = ..." for every search-specific key
// it does not accept, then its own checks.
const SearchChecks& search_checks();

}  // namespace cerebro
