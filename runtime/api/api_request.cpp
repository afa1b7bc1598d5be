#include "runtime/api/api_request.hpp"

#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cerebro::api {

namespace {

bool valid_param_name(const std::string& key) {
  if (key.empty() || key.size() > 64) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

}  // namespace

Result<std::vector<std::string>> settings_from_body(const std::string& body, bool require_one) {
  if (body.size() > kMaxBodyBytes)
    return Status::invalid_argument(
        fmt::format("the body has {} bytes; at most {} are read", body.size(), kMaxBodyBytes));
  std::vector<std::string> settings;
  bool blank = body.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank) {
    if (require_one)
      return Status::invalid_argument(
          "the body must be {\"params\": {\"key\": value, ...}} with at least one parameter");
    return settings;
  }
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_discarded()) return Status::invalid_argument("the body is not valid JSON");
  if (!json.is_object()) return Status::invalid_argument("the body must be a JSON object: {\"params\": {...}}");
  for (const auto& [key, value] : json.items())
    if (key != "params")
      return Status::invalid_argument(
          fmt::format("unknown key \"{}\" in the body (only \"params\")", key.substr(0, 64)));
  if (!json.contains("params")) {
    if (require_one) return Status::invalid_argument("the body has no \"params\" object");
    return settings;
  }
  const auto& params = json["params"];
  if (!params.is_object()) return Status::invalid_argument("\"params\" must be an object of hyper-parameters");
  if (params.size() > kMaxParams)
    return Status::invalid_argument(fmt::format("\"params\" has {} entries; at most {}", params.size(), kMaxParams));
  if (require_one && params.empty())
    return Status::invalid_argument("\"params\" is empty: give at least one parameter to change");
  for (const auto& [key, value] : params.items()) {
    if (!valid_param_name(key))
      return Status::invalid_argument(
          fmt::format("\"{}\" is not a parameter name (letters, digits, _ . -)", key.substr(0, 64)));
    if (value.is_null() || value.is_object())
      return Status::invalid_argument(fmt::format("params.{}: a value must be a number, string, boolean or list", key));
    if (value.is_string() && value.get<std::string>().empty())
      return Status::invalid_argument(fmt::format("params.{}: the value is empty", key));
    // As JSON text: apply_settings reads it back as the same value (a string stays a string).
    settings.push_back(key + "=" + value.dump());
  }
  return settings;
}

Status check_spec_body(const std::string& body) {
  if (body.size() > kMaxBodyBytes)
    return Status::invalid_argument(
        fmt::format("the spec has {} bytes; at most {} are read", body.size(), kMaxBodyBytes));
  if (body.find_first_not_of(" \t\r\n") == std::string::npos)
    return Status::invalid_argument("the body is empty: send the experiment spec (TOML) as the body");
  return Status::ok_status();
}

std::string error_json(int http_status, const std::string& message) {
  return nlohmann::json{{"error", message}, {"status", http_status}}.dump();
}

}  // namespace cerebro::api
