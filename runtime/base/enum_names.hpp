#pragma once
// How an enum is spelled: one table of (value, name) entries per enum, read
// both ways by the functions below, so that the text of a value (in specs,
// JSON, the CLI, log lines) is written once, in its table, and code compares
// the values, not their text. A table is an array of std::pair<Enum, name>
// or a registry of info structs with a `name` and a `kind` (or `command`)
// member; its enum's to_string and parse_* are a line each over it.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cerebro {

template <class Enum>
using EnumName = std::pair<Enum, std::string_view>;

namespace enum_names_detail {

template <class Enum, class Name>
Enum entry_value(const std::pair<Enum, Name>& entry) {
  return entry.first;
}
template <class Enum, class Name>
std::string_view entry_name(const std::pair<Enum, Name>& entry) {
  return entry.second;
}
template <class Info>
auto entry_value(const Info& info) -> decltype(info.kind) {
  return info.kind;
}
template <class Info>
auto entry_value(const Info& info) -> decltype(info.command) {
  return info.command;
}
template <class Info>
auto entry_name(const Info& info) -> decltype(std::string_view(info.name)) {
  return info.name;
}

}  // namespace enum_names_detail

// The name of `value` in `table`; `fallback` for a value the table lacks.
template <class Table, class Enum>
std::string enum_name(const Table& table, Enum value, std::string_view fallback = "unknown") {
  for (const auto& entry : table) {
    if (enum_names_detail::entry_value(entry) == value) return std::string(enum_names_detail::entry_name(entry));
  }
  return std::string(fallback);
}

// The value named `text` in `table`; nullopt when no entry has that name.
template <class Enum, class Table>
std::optional<Enum> enum_named(const Table& table, std::string_view text) {
  for (const auto& entry : table) {
    if (enum_names_detail::entry_name(entry) == text) return enum_names_detail::entry_value(entry);
  }
  return std::nullopt;
}

// Every name in the table's order (for help texts and "expected one of").
template <class Table>
std::vector<std::string> enum_names(const Table& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(enum_names_detail::entry_name(entry));
  return out;
}

// "a, b or c": the names for an error message.
template <class Table>
std::string enum_alternatives(const Table& table) {
  const std::vector<std::string> names = enum_names(table);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace cerebro
