// `cerebro status`: a cluster's agents and experiments, as the coordinator
// knows them.
#include <memory>

#include <fmt/format.h>

#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/shared_options.hpp"
#include "tools/status_format.hpp"

namespace cerebro::cli {

namespace {

int status_main(const ClientOptions& o) {
  auto token = read_cluster_token(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (auto p = o.tls.problem(); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  auto status = session.client->status();
  if (!status.ok()) return fail(status.error());
  fmt::print("{}", cli::format_cluster_status(*status));
  return 0;
}

CommandAction setup(CLI::App& status) {
  auto o = std::make_shared<ClientOptions>();
  add_cluster_options(status, o->cluster, o->token_file);
  add_connect_timeout_option(status, o->connect_timeout_s);
  add_tls_options(status, o->tls);
  return [o]() -> int { leave_now(status_main(*o)); };
}

const CommandRegistrar registrar{{"status", "List a cluster's agents and experiments", 50, setup}};

}  // namespace

}  // namespace cerebro::cli
