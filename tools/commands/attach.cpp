// `cerebro attach`: follows an experiment already on the coordinator (e.g.
// after the client or the coordinator restarted) and writes its run files.
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/shared_options.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct AttachOptions {
  ClientOptions client;
  std::string experiment;
  std::string out_dir;
};

int attach_main(const ClientOptions& o, const std::string& experiment, const std::string& out_dir) {
  auto token = read_cluster_token(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (auto p = client_problem(o, out_dir); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  std::string metric = "val_accuracy";
  auto result = follow(metric, [&](const Client::Progress& progress) {
    return session.client->attach(
        experiment,
        [&](const nlohmann::json& attached) {
          fmt::print(stderr, "following experiment {} ({})\n", experiment, attached["status"].get<std::string>());
        },
        progress);
  });
  return save_run_files(result, experiment, out_dir);
}

CommandAction setup(CLI::App& attach) {
  auto o = std::make_shared<AttachOptions>();
  attach.add_option("experiment", o->experiment, "The experiment's id (see cerebro status)")->required();
  add_cluster_options(attach, o->client.cluster, o->client.token_file);
  attach.add_option("--out", o->out_dir, "Where to write the run files (default: runs/<experiment>)");
  add_tls_options(attach, o->client.tls);
  return [o]() -> int {
    leave_now(attach_main(o->client, o->experiment,
                          o->out_dir.empty() ? (fs::path("runs") / o->experiment).string() : o->out_dir));
  };
}

const CommandRegistrar registrar{
    {"attach", "Follow an experiment running on a cluster and receive its run files", 40, setup}};

}  // namespace

}  // namespace cerebro::cli
