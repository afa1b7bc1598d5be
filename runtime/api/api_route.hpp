#pragma once
// The HTTP API's route table (docs/API.md): which endpoint a method and path
// name, with the experiment and config they carry. Plain code: the server
// (actors/http) matches every request here first, so an unknown path or a
// wrong method is answered before anything is asked of the coordinator.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::api {

// Every route is under this prefix: a new version gets a new prefix.
constexpr const char* kApiPrefix = "/api/v1";

enum class Endpoint {
  list_experiments,   // GET  /api/v1/experiments
  submit_experiment,  // POST /api/v1/experiments            (body: TOML spec)
  get_experiment,     // GET  /api/v1/experiments/{id}
  get_status,         // GET  /api/v1/experiments/{id}/status  (its entry alone: what a progress line needs)
  get_units,          // GET  /api/v1/experiments/{id}/units[?since=N]
  get_config,         // GET  /api/v1/experiments/{id}/configs/{c}
  pause,              // POST /api/v1/experiments/{id}/pause
  resume,             // POST /api/v1/experiments/{id}/resume
  stop_config,        // POST /api/v1/experiments/{id}/configs/{c}/stop
  clone_config,       // POST /api/v1/experiments/{id}/configs/{c}/clone  (body: {"params": {...}})
  add_config,         // POST /api/v1/experiments/{id}/configs            (body: {"params": {...}})
  list_agents,        // GET  /api/v1/agents
  cluster,            // GET  /api/v1/cluster  (agents and experiments in one answer, for the dashboard)
  version,            // GET  /api/v1/version  (the server's version and API version)
  config_model,       // GET  /api/v1/experiments/{id}/configs/{c}/model  (TorchScript)
  best_model,         // GET  /api/v1/experiments/{id}/best_model        (TorchScript, once the run has ended)
  run_file,           // GET  /api/v1/experiments/{id}/files/{file}      (summary.json, metrics.csv, report.html)
  list_datasets,      // GET    /api/v1/datasets          (registered datasets and the prepared-data cache)
  add_dataset,        // POST   /api/v1/datasets          (body: {"name", "data"}; or a form with its files)
  remove_dataset,     // DELETE /api/v1/datasets/{name}
};

// The run files the API serves by name (`{file}`): what a finished run leaves, and its report.
enum class RunFile { summary, metrics, report, best_model };
std::optional<RunFile> parse_run_file(const std::string& name);
std::string to_string(RunFile file);
const char* content_type_of(RunFile file);

// The methods the server answers (anything else is `other`, refused by
// match_route with 404 or 405).
enum class HttpMethod { get, post, delete_, other };
HttpMethod parse_http_method(const std::string& text);  // "GET", "POST", "DELETE"; `other` for any other text
std::string to_string(HttpMethod method);

// The pages outside the API: the dashboard (at / or /index.html), its
// login form, and Prometheus' /metrics; `other` is a dashboard asset or
// nothing.
enum class SitePage { dashboard, login, metrics, other };
SitePage site_page(const std::string& path);

struct RouteInfo {
  Endpoint endpoint;
  HttpMethod method;
  std::string pattern;  // "/api/v1/experiments/{id}/configs/{config}/stop": for docs and errors
  bool changes_state;   // steering, submitting or registering (a POST or a DELETE)
};

// Every route, in the order docs/API.md lists them.
const std::vector<RouteInfo>& routes();
const RouteInfo& route_info(Endpoint endpoint);

struct Route {
  Endpoint endpoint = Endpoint::list_experiments;
  std::string experiment;           // {id}
  ConfigId config = -1;             // {config}
  RunFile file = RunFile::summary;  // {file}, and best_model's
  int64_t since = 0;                // get_units: ?since=N, the units after the first N
  std::string name;                 // {name}: a dataset's
};

// What a method and path match: a route, or the HTTP status (404 no such
// path, 405 the path exists for another method, 400 a config that is not a
// number) and a message naming what is wrong.
struct RouteMatch {
  std::optional<Route> route;
  int http_status = 200;
  std::string error;
};

RouteMatch match_route(const std::string& method, const std::string& path);

// The value of ?since= (the count of units a poller has): a whole number
// >= 0; an error names the parameter and the text.
Result<int64_t> parse_since(const std::string& text);

}  // namespace cerebro::api
