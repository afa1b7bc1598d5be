#include "tools/cluster_client.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/spec/spec.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "tools/command_support.hpp"
#include "tools/status_format.hpp"
#include "tools/progress.hpp"

namespace fs = std::filesystem;

namespace cerebro {

using cli::fail;

Endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos)
    throw Error(fmt::format("\"{}\" is not host:port", text), StatusCode::invalid_argument);
  Endpoint e;
  if (colon > 0) e.host = text.substr(0, colon);
  try {
    size_t used = 0;
    auto port = std::stoul(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port > 65535) throw std::out_of_range("port");
    e.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    throw Error(fmt::format("\"{}\": the port must be a number from 0 to 65535", text), StatusCode::invalid_argument);
  }
  return e;
}

Result<std::string> read_cluster_token(const std::string& token_file) {
  if (token_file.empty()) return Status::invalid_argument("--token-file is required");
  return read_token_file(token_file);
}

ClientSession::ClientSession(const ClientOptions& o, std::string token)
    : config(system_role::client, o.tls), system(config) {
  auto at = parse_endpoint(o.cluster);
  auto connected =
      Client::connect(system, GatewayAddress{at.host, at.port, o.tls.enabled()}, std::move(token), o.connect_timeout_s);
  if (connected.ok()) {
    client = std::move(connected).value();
    client->reconnect_timeout_s = o.reconnect_timeout_s;
  } else {
    error = connected.error();
  }
}

Result<run_files> follow(const std::string& metric,
                         const std::function<Result<run_files>(const Client::Progress&)>& call) {
  cli::ProgressPrinter printer(metric);
  auto result = call([&](const progress_update& p) {
    if (p.units_total == 0 && !p.event.empty())
      printer.line(p.event);
    else
      printer.update(p);
  });
  printer.finish();
  return result;
}

int save_run_files(const Result<run_files>& result, const std::string& experiment, const std::string& out_dir) {
  if (!result.ok()) return fail(result.error());
  auto& files = *result;
  if (!files.error.empty()) return fail(files.error);
  if (auto written = write_run_files(files, out_dir); !written.ok()) return fail(written.message());
  auto summary = nlohmann::json::parse(std::ifstream(fs::path(out_dir) / "summary.json"), nullptr, false);
  fmt::print("\nexperiment {} finished; run files in {}\n", experiment, out_dir);
  if (!summary.is_discarded() && summary["best"].is_object()) fmt::print("{}\n", cli::best_line(summary));
  return 0;
}

std::string client_problem(const ClientOptions& o, const std::string& out_dir) {
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec))
    return fmt::format("{}: the run directory already exists and is not empty", out_dir);
  return o.tls.problem();
}

int run_on_cluster(const ClientOptions& o, const std::string& spec_path, const std::string& out_dir) {
  auto token = read_cluster_token(o.token_file);
  if (!token.ok()) return fail(token.error());
  auto spec = parse_spec_file(spec_path);  // the same errors as an embedded run, before any traffic
  if (!spec.ok()) return fail(spec.error());
  if (auto p = client_problem(o, out_dir); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  std::string experiment;
  auto result = follow(to_string(spec->metric), [&](const Client::Progress& progress) {
    return session.client->run(
        spec->source_text, spec->spec_dir, spec_path,
        [&](const std::string& id) {
          experiment = id;
          fmt::print(stderr, "submitted experiment {}\n", experiment);
        },
        progress);
  });
  return save_run_files(result, experiment, out_dir);
}

}  // namespace cerebro
