#include "runtime/spec/spec_builder.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include <toml++/toml.h>

namespace cerebro {

namespace {

using nlohmann::json;

// Inserts `value` as `key` into `table`. JSON null has no TOML form; the spec
// parser would refuse it anyway, so it is written as an empty table that the
// parser reports with the key's position.
void insert_json(toml::table& table, const std::string& key, const json& value);

toml::array to_array(const json& values) {
  toml::array out;
  for (const auto& v : values) {
    toml::table holder;
    insert_json(holder, "v", v);
    out.push_back(std::move(*holder.get("v")));
  }
  return out;
}

void insert_json(toml::table& table, const std::string& key, const json& value) {
  switch (value.type()) {
    case json::value_t::boolean: table.insert_or_assign(key, value.get<bool>()); break;
    case json::value_t::number_integer: table.insert_or_assign(key, value.get<int64_t>()); break;
    case json::value_t::number_unsigned:
      table.insert_or_assign(key, static_cast<int64_t>(value.get<uint64_t>()));
      break;
    case json::value_t::number_float: table.insert_or_assign(key, value.get<double>()); break;
    case json::value_t::string: table.insert_or_assign(key, value.get<std::string>()); break;
    case json::value_t::array: table.insert_or_assign(key, to_array(value)); break;
    case json::value_t::object: {
      toml::table inner;
      for (const auto& [k, v] : value.items()) insert_json(inner, k, v);
      inner.is_inline(true);
      table.insert_or_assign(key, std::move(inner));
      break;
    }
    default: table.insert_or_assign(key, toml::table{}); break;
  }
}

}  // namespace

SpecBuilder::SpecBuilder(std::string name) : name_(std::move(name)), sections_(json::object()) {
  set("experiment", "name", name_);
}

SpecBuilder& SpecBuilder::epochs(int epochs) { return set("experiment", "epochs", epochs); }
SpecBuilder& SpecBuilder::seed(uint64_t seed) { return set("experiment", "seed", seed); }
SpecBuilder& SpecBuilder::metric(const std::string& metric) { return set("experiment", "metric", metric); }
SpecBuilder& SpecBuilder::search(const std::string& procedure) { return set("experiment", "search", procedure); }
SpecBuilder& SpecBuilder::samples(int samples) { return set("experiment", "samples", samples); }
SpecBuilder& SpecBuilder::data_source(const std::string& source) { return set("data", "source", source); }
SpecBuilder& SpecBuilder::limit(int64_t examples) { return set("data", "limit", examples); }
SpecBuilder& SpecBuilder::partitions(int partitions) { return set("data", "partitions", partitions); }
SpecBuilder& SpecBuilder::validation_fraction(double fraction) { return set("data", "validation_fraction", fraction); }
SpecBuilder& SpecBuilder::workers(int workers) { return set("cluster", "workers", workers); }
SpecBuilder& SpecBuilder::space(const std::string& key, std::vector<json> values) {
  return set("space", key, json(std::move(values)));
}
SpecBuilder& SpecBuilder::space_value(const std::string& key, const json& value) { return set("space", key, value); }

SpecBuilder& SpecBuilder::set(const std::string& section, const std::string& key, const json& value) {
  sections_[section][key] = value;
  return *this;
}

std::string SpecBuilder::toml() const {
  // Sections in the order a person writes them; unknown ones after, so the
  // parser names them.
  std::vector<std::string> order = {"experiment", "data", "cluster", "space"};
  for (const auto& [section, keys] : sections_.items())
    if (std::find(order.begin(), order.end(), section) == order.end()) order.push_back(section);
  std::ostringstream out;
  for (const auto& section : order) {
    if (!sections_.contains(section)) continue;
    toml::table table;
    for (const auto& [key, value] : sections_[section].items()) insert_json(table, key, value);
    out << '[' << section << "]\n" << table << "\n\n";
  }
  return out.str();
}

Result<ExperimentSpec> SpecBuilder::build(const std::string& base_dir) const {
  return parse_spec_string(toml(), base_dir, name_ + ".toml");
}

}  // namespace cerebro
