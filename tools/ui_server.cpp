#include "tools/ui_server.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/api/api_auth.hpp"
#include "runtime/base/status.hpp"
#include "tools/cluster_client.hpp"

namespace cerebro::cli {

UiAddress parse_ui_address(const std::string& text) {
  UiAddress at;
  auto endpoint = parse_endpoint(text.find(':') == std::string::npos ? ":" + text : text);
  if (!endpoint.host.empty()) at.host = endpoint.host;
  at.port = endpoint.port;
  return at;
}

void add_ui_option(CLI::App& command, std::string& ui) {
  command.add_option("--ui", ui,
                     "Serve the dashboard and HTTP API on [HOST:]PORT (host 127.0.0.1 unless given; port 0: any free "
                     "port); the URL printed carries a one-time token");
}

std::unique_ptr<HttpServer> start_embedded_ui(caf::actor_system& system, const coordinator_actor& gateway,
                                              const std::string& gateway_token, const std::string& ui,
                                              const std::string& state_dir, bool read_only) {
  auto at = parse_ui_address(ui);
  HttpServerOptions options;
  options.host = at.host;
  options.port = at.port;
  options.token = api::random_token();
  // The link's own token: it logs one browser in once (a copy of the link
  // found later opens nothing); the API token is for programs and the login page.
  options.one_time_token = api::random_token();
  options.gateway_token = gateway_token;
  options.upload_dir = (std::filesystem::path(state_dir) / "uploads").string();
  options.read_only = read_only;
  auto server = HttpServer::start(system, gateway, options);
  if (!server.ok()) {
    fmt::print(stderr, "error: --ui: {}\n", server.error());
    return nullptr;
  }
  fmt::print(stderr, "dashboard: {}\n", (*server)->login_url());
  fmt::print(stderr,
             "api token: {} (Authorization: Bearer, or the login page; the link above logs one browser in once, "
             "and expires unused after {} minutes)\n",
             options.token, api::kOneTimeTokenLifetime.count());
  std::fflush(stderr);
  return std::move(server).value();
}

}  // namespace cerebro::cli
