#include "runtime/spec/steering.hpp"

#include <set>

#include <fmt/format.h>

namespace cerebro {

Result<nlohmann::json> apply_settings(const nlohmann::json& base, const std::vector<std::string>& settings) {
  if (!base.is_object()) return Status::invalid_argument("the base hyper-parameters are not an object");
  nlohmann::json out = base;
  std::set<std::string> seen;
  for (const auto& s : settings) {
    auto eq = s.find('=');
    if (eq == std::string::npos)
      return Status::invalid_argument(fmt::format("\"{}\" is not key=value (e.g. lr=0.001)", s));
    auto key = s.substr(0, eq);
    auto text = s.substr(eq + 1);
    if (key.empty()) return Status::invalid_argument(fmt::format("\"{}\" has no key before '='", s));
    if (text.empty()) return Status::invalid_argument(fmt::format("\"{}\" has no value after '='", s));
    if (!seen.insert(key).second) return Status::invalid_argument(fmt::format("{} is set twice", key));
    // Plain words (mlp, adam) are strings; anything JSON reads is taken as JSON.
    auto value = nlohmann::json::parse(text, nullptr, false);
    out[key] = value.is_discarded() ? nlohmann::json(text) : value;
  }
  return out;
}

namespace {
// The "by" of a person's action record; the search procedure's decisions have no "by".
const std::string by_user = "user";
}  // namespace

nlohmann::json user_action(SteeringCommand action) { return {{"by", by_user}, {"action", to_string(action)}}; }

bool is_user_action(const nlohmann::json& record) {
  return record.is_object() && record.value("by", std::string()) == by_user;
}

}  // namespace cerebro
