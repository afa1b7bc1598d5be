#include "runtime/api/api_route.hpp"

#include <array>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "runtime/base/enum_names.hpp"

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

constexpr std::array<EnumName<HttpMethod>, 3> kMethodNames = {
    {{HttpMethod::get, "GET"}, {HttpMethod::post, "POST"}, {HttpMethod::delete_, "DELETE"}}};

constexpr std::array<EnumName<RunFile>, 4> kRunFileNames = {{{RunFile::summary, "summary.json"},
                                                             {RunFile::metrics, "metrics.csv"},
                                                             {RunFile::report, "report.html"},
                                                             {RunFile::best_model, "best_model.pt"}}};

constexpr std::array<EnumName<SitePage>, 4> kPagePaths = {{{SitePage::dashboard, "/"},
                                                           {SitePage::dashboard, "/index.html"},
                                                           {SitePage::login, "/login"},
                                                           {SitePage::metrics, "/metrics"}}};

}  // namespace

HttpMethod parse_http_method(const std::string& text) {
  return enum_named<HttpMethod>(kMethodNames, text).value_or(HttpMethod::other);
}

std::string to_string(HttpMethod method) { return enum_name(kMethodNames, method, "OTHER"); }

std::optional<RunFile> parse_run_file(const std::string& name) { return enum_named<RunFile>(kRunFileNames, name); }

std::string to_string(RunFile file) { return enum_name(kRunFileNames, file, "summary.json"); }

const char* content_type_of(RunFile file) {
  switch (file) {
    case RunFile::summary: return "application/json";
    case RunFile::metrics: return "text/csv; charset=utf-8";
    case RunFile::report: return "text/html; charset=utf-8";
    case RunFile::best_model: return "application/octet-stream";
  }
  return "application/octet-stream";
}

SitePage site_page(const std::string& path) { return enum_named<SitePage>(kPagePaths, path).value_or(SitePage::other); }

const std::vector<RouteInfo>& routes() {
  static const std::vector<RouteInfo> table = {
      {Endpoint::list_experiments, HttpMethod::get, "/api/v1/experiments", false},
      {Endpoint::submit_experiment, HttpMethod::post, "/api/v1/experiments", true},
      {Endpoint::get_experiment, HttpMethod::get, "/api/v1/experiments/{id}", false},
      {Endpoint::get_status, HttpMethod::get, "/api/v1/experiments/{id}/status", false},
      {Endpoint::get_units, HttpMethod::get, "/api/v1/experiments/{id}/units", false},
      {Endpoint::get_config, HttpMethod::get, "/api/v1/experiments/{id}/configs/{config}", false},
      {Endpoint::pause, HttpMethod::post, "/api/v1/experiments/{id}/pause", true},
      {Endpoint::resume, HttpMethod::post, "/api/v1/experiments/{id}/resume", true},
      {Endpoint::stop_config, HttpMethod::post, "/api/v1/experiments/{id}/configs/{config}/stop", true},
      {Endpoint::clone_config, HttpMethod::post, "/api/v1/experiments/{id}/configs/{config}/clone", true},
      {Endpoint::add_config, HttpMethod::post, "/api/v1/experiments/{id}/configs", true},
      {Endpoint::list_agents, HttpMethod::get, "/api/v1/agents", false},
      {Endpoint::cluster, HttpMethod::get, "/api/v1/cluster", false},
      {Endpoint::version, HttpMethod::get, "/api/v1/version", false},
      {Endpoint::config_model, HttpMethod::get, "/api/v1/experiments/{id}/configs/{config}/model", false},
      {Endpoint::best_model, HttpMethod::get, "/api/v1/experiments/{id}/best_model", false},
      {Endpoint::run_file, HttpMethod::get, "/api/v1/experiments/{id}/files/{file}", false},
      {Endpoint::list_datasets, HttpMethod::get, "/api/v1/datasets", false},
      {Endpoint::add_dataset, HttpMethod::post, "/api/v1/datasets", true},
      {Endpoint::remove_dataset, HttpMethod::delete_, "/api/v1/datasets/{name}", true},
  };
  return table;
}

const RouteInfo& route_info(Endpoint endpoint) {
  for (const auto& r : routes())
    if (r.endpoint == endpoint) return r;
  return routes().front();  // unreachable: every endpoint has a row
}

RouteMatch match_route(const std::string& method, const std::string& path) {
  const HttpMethod asked = parse_http_method(method);
  auto parts = split_path(path);
  bool path_known = false;
  for (const auto& info : routes()) {
    auto pattern = split_path(info.pattern);
    if (pattern.size() != parts.size()) continue;
    Route route{info.endpoint, "", -1};
    if (info.endpoint == Endpoint::best_model) route.file = RunFile::best_model;
    bool same = true;
    std::string bad_config, bad_file;
    for (size_t i = 0; i < parts.size() && same; ++i) {
      if (!is_placeholder(pattern[i])) {
        same = pattern[i] == parts[i];
      } else if (pattern[i] == "{id}") {
        same = plausible_experiment_id(parts[i]);
        route.experiment = parts[i];
      } else if (pattern[i] == "{name}") {
        // A dataset's name is checked where it is registered; here only that it could be one.
        same = plausible_experiment_id(parts[i]);
        route.name = parts[i];
      } else if (pattern[i] == "{file}") {
        // Only these names: a path can never reach another file of the server.
        auto file = parse_run_file(parts[i]);
        if (!file || *file == RunFile::best_model) bad_file = parts[i];
        route.file = file.value_or(RunFile::summary);
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
    if (info.method != asked) continue;
    if (!bad_config.empty())
      return {std::nullopt, 400,
              fmt::format("\"{}\" is not a config id (a number such as 3)", bad_config.substr(0, 40))};
    if (!bad_file.empty())
      return {std::nullopt, 404,
              fmt::format("no run file \"{}\": the API serves summary.json, metrics.csv and report.html (and the "
                          "best model at .../best_model)",
                          bad_file.substr(0, 40))};
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
