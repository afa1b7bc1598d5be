// The reading helpers of runtime/spec/spec_section.hpp.
#include "runtime/spec/spec_section.hpp"

#include <filesystem>

namespace cerebro::spec_detail {

namespace fs = std::filesystem;

// A TOML value as JSON; nullopt for dates and times, which no key accepts.
std::optional<json> to_json(const toml::node& node) {
  if (auto v = node.as_integer()) return json(v->get());
  if (auto v = node.as_floating_point()) return json(v->get());
  if (auto v = node.as_string()) return json(v->get());
  if (auto v = node.as_boolean()) return json(v->get());
  if (auto arr = node.as_array()) {
    json out = json::array();
    for (const auto& item : *arr) {
      auto j = to_json(item);
      if (!j) return std::nullopt;
      out.push_back(std::move(*j));
    }
    return out;
  }
  if (auto tbl = node.as_table()) {
    json out = json::object();
    for (const auto& [k, v] : *tbl) {
      auto j = to_json(v);
      if (!j) return std::nullopt;
      out[std::string(k.str())] = std::move(*j);
    }
    return out;
  }
  return std::nullopt;
}

// "string \"3\"", "float 3.0": what the user wrote, for "got ..." messages.
std::string describe_node(const toml::node& node) {
  if (auto v = node.as_floating_point(); v && !std::isfinite(v->get())) {
    return std::string("float ") + (std::isnan(v->get()) ? "nan" : v->get() > 0 ? "inf" : "-inf");
  }
  auto j = to_json(node);
  if (!j) return "a date/time value";
  return json_type_name(*j) + " " + j->dump();
}

// Some float inside a value that is not finite (TOML allows inf and nan).
const toml::node* find_non_finite(const toml::node& node) {
  if (auto v = node.as_floating_point()) return std::isfinite(v->get()) ? nullptr : &node;
  if (auto arr = node.as_array()) {
    for (const auto& item : *arr)
      if (auto bad = find_non_finite(item)) return bad;
  }
  if (auto tbl = node.as_table()) {
    for (const auto& [k, v] : *tbl)
      if (auto bad = find_non_finite(v)) return bad;
  }
  return nullptr;
}

// An absolute, lexically normal path; relative paths are taken from `base`.
std::string resolve_path(const std::string& base, const std::string& path) {
  if (path.empty()) return path;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

std::string resolve_input_path(const PathBase& base, const std::string& path) {
  const std::string at_dir = resolve_path(base.dir, path);
  if (path.empty() || fs::path(path).is_absolute() || base.search_dirs.empty()) return at_dir;
  std::error_code ec;
  if (fs::exists(at_dir, ec)) return at_dir;
  for (const auto& dir : base.search_dirs) {
    auto candidate = resolve_path(dir, path);
    if (fs::exists(candidate, ec)) return candidate;
  }
  return at_dir;
}

}  // namespace cerebro::spec_detail
