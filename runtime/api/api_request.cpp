#include "runtime/api/api_request.hpp"

#include <array>
#include <cctype>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/base/enum_names.hpp"

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

namespace {

// The leading whole number of `text` from `at` (advanced past it), or -1.
int64_t leading_number(const std::string& text, size_t& at) {
  size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == at || end - at > 9) return -1;
  const int64_t value = std::stoll(text.substr(at, end - at));
  at = end;
  return value;
}

// "[section] name" of a problem's text, or null.
nlohmann::json key_of(const std::string& text) {
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find("] ");
    if (close == std::string::npos) return nullptr;
    const auto name_end = text.find(' ', close + 2);
    auto name = text.substr(close + 2, name_end == std::string::npos ? std::string::npos : name_end - close - 2);
    if (name.empty()) return nullptr;
    return text.substr(0, close + 1) + " " + name;
  }
  constexpr std::string_view kUnknown = "unknown key '";
  if (text.rfind(kUnknown, 0) == 0) {
    const auto quote = text.find('\'', kUnknown.size());
    const auto section = quote == std::string::npos ? quote : text.find(" in [", quote);
    const auto close = section == std::string::npos ? section : text.find(']', section);
    if (close == std::string::npos) return nullptr;
    return text.substr(section + 4, close + 1 - (section + 4)) + " " +
           text.substr(kUnknown.size(), quote - kUnknown.size());
  }
  return nullptr;
}

}  // namespace

std::optional<SubmissionPart> parse_submission_part(const std::string& name) {
  static constexpr std::array<EnumName<SubmissionPart>, 3> kParts = {
      {{SubmissionPart::spec, "spec"}, {SubmissionPart::dataset, "dataset"}, {SubmissionPart::file, "file"}}};
  return enum_named<SubmissionPart>(kParts, name);
}

nlohmann::json spec_problems(const std::string& message, const std::string& origin) {
  nlohmann::json problems = nlohmann::json::array();
  size_t begin = 0;
  while (begin <= message.size()) {
    auto end = message.find('\n', begin);
    if (end == std::string::npos) end = message.size();
    const std::string line = message.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    nlohmann::json problem{{"message", line}, {"key", nullptr}, {"line", nullptr}, {"column", nullptr}};
    if (line.rfind(origin + ":", 0) == 0) {
      size_t at = origin.size() + 1;
      const auto row = leading_number(line, at);
      int64_t column = -1;
      if (row >= 0 && at < line.size() && line[at] == ':') {
        ++at;
        column = leading_number(line, at);
      }
      if (row >= 0 && column >= 0 && line.compare(at, 2, ": ") == 0) {
        problem["line"] = row;
        problem["column"] = column;
        problem["message"] = line.substr(at + 2);
      } else if (line.compare(origin.size(), 2, ": ") == 0) {
        problem["message"] = line.substr(origin.size() + 2);
      }
    }
    problem["key"] = key_of(problem["message"].get<std::string>());
    problems.push_back(std::move(problem));
  }
  return problems;
}

}  // namespace cerebro::api
