#include "runtime/api/api_route.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace cerebro::api {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : path) {
    if (c == '/') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

bool is_placeholder(const std::string& part) { return part.size() > 2 && part.front() == '{' && part.back() == '}'; }

// Experiment ids are names, dashes and digits (the coordinator makes them):
// anything else cannot name one.
bool plausible_experiment_id(const std::string& id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

const std::vector<RouteInfo>& routes() {
  static const std::vector<RouteInfo> table = {
      {Endpoint::list_experiments, "GET", "/api/v1/experiments", false},
      {Endpoint::submit_experiment, "POST", "/api/v1/experiments", true},
      {Endpoint::get_experiment, "GET", "/api/v1/experiments/{id}", false},
      {Endpoint::get_units, "GET", "/api/v1/experiments/{id}/units", false},
      {Endpoint::get_config, "GET", "/api/v1/experiments/{id}/configs/{config}", false},
      {Endpoint::pause, "POST", "/api/v1/experiments/{id}/pause", true},
      {Endpoint::resume, "POST", "/api/v1/experiments/{id}/resume", true},
      {Endpoint::stop_config, "POST", "/api/v1/experiments/{id}/configs/{config}/stop", true},
      {Endpoint::clone_config, "POST", "/api/v1/experiments/{id}/configs/{config}/clone", true},
      {Endpoint::add_config, "POST", "/api/v1/experiments/{id}/configs", true},
      {Endpoint::list_agents, "GET", "/api/v1/agents", false},
      {Endpoint::cluster, "GET", "/api/v1/cluster", false},
  };
  return table;
}

const RouteInfo& route_info(Endpoint endpoint) {
  for (const auto& r : routes())
    if (r.endpoint == endpoint) return r;
  return routes().front();  // unreachable: every endpoint has a row
}

RouteMatch match_route(const std::string& method, const std::string& path) {
  auto parts = split_path(path);
  bool path_known = false;
  for (const auto& info : routes()) {
    auto pattern = split_path(info.pattern);
    if (pattern.size() != parts.size()) continue;
    Route route{info.endpoint, "", -1};
    bool same = true;
    std::string bad_config;
    for (size_t i = 0; i < parts.size() && same; ++i) {
      if (!is_placeholder(pattern[i])) {
        same = pattern[i] == parts[i];
      } else if (pattern[i] == "{id}") {
        same = plausible_experiment_id(parts[i]);
        route.experiment = parts[i];
      } else {  // {config}
        const auto& text = parts[i];
        int value = -1;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < 0) bad_config = text;
        route.config = value;
      }
    }
    if (!same) continue;
    path_known = true;
    if (info.method != method) continue;
    if (!bad_config.empty())
      return {std::nullopt, 400,
              fmt::format("\"{}\" is not a config id (a number such as 3)", bad_config.substr(0, 40))};
    return {route, 200, ""};
  }
  if (path_known) return {std::nullopt, 405, fmt::format("{} is not allowed on {}", method, path.substr(0, 200))};
  return {std::nullopt, 404, fmt::format("no such endpoint: {} {} (see docs/API.md)", method, path.substr(0, 200))};
}

Result<int64_t> parse_since(const std::string& text) {
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0)
    return Status::invalid_argument(
        fmt::format("since: \"{}\" is not a count of units (a whole number such as 0 or 120)", text.substr(0, 40)));
  return value;
}

}  // namespace cerebro::api
