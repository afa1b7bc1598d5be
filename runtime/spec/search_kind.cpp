#include "runtime/spec/search_kind.hpp"

#include <ostream>

namespace cerebro {

std::string to_string(SearchKind kind) {
  switch (kind) {
    case SearchKind::grid: return "grid";
    case SearchKind::random: return "random";
    case SearchKind::asha: return "asha";
    case SearchKind::hyperband: return "hyperband";
    case SearchKind::pbt: return "pbt";
    case SearchKind::tpe: return "tpe";
  }
  return "unknown";
}

const std::vector<SearchKind>& search_kinds() {
  static const std::vector<SearchKind> kinds = {SearchKind::grid,      SearchKind::random, SearchKind::asha,
                                                SearchKind::hyperband, SearchKind::pbt,    SearchKind::tpe};
  return kinds;
}

const std::vector<std::string>& search_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (SearchKind kind : search_kinds()) out.push_back(to_string(kind));
    return out;
  }();
  return names;
}

std::optional<SearchKind> parse_search_kind(const std::string& name) {
  for (SearchKind kind : search_kinds()) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, SearchKind kind) { return os << to_string(kind); }

}  // namespace cerebro
