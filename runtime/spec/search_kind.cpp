#include "runtime/spec/search_kind.hpp"

#include <array>
#include <ostream>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

namespace {
constexpr std::array<EnumName<SearchKind>, 6> kSearchNames = {{{SearchKind::grid, "grid"},
                                                               {SearchKind::random, "random"},
                                                               {SearchKind::asha, "asha"},
                                                               {SearchKind::hyperband, "hyperband"},
                                                               {SearchKind::pbt, "pbt"},
                                                               {SearchKind::tpe, "tpe"}}};
}  // namespace

std::string to_string(SearchKind kind) { return enum_name(kSearchNames, kind); }

const std::vector<SearchKind>& search_kinds() {
  static const std::vector<SearchKind> kinds = [] {
    std::vector<SearchKind> out;
    for (const auto& [kind, name] : kSearchNames) out.push_back(kind);
    return out;
  }();
  return kinds;
}

const std::vector<std::string>& search_names() {
  static const std::vector<std::string> names = enum_names(kSearchNames);
  return names;
}

std::optional<SearchKind> parse_search_kind(const std::string& name) {
  return enum_named<SearchKind>(kSearchNames, name);
}

std::ostream& operator<<(std::ostream& os, SearchKind kind) { return os << to_string(kind); }

}  // namespace cerebro
