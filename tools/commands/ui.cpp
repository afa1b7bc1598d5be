// `cerebro ui DIR`: the dashboard and the HTTP API, read only, over every run directory under DIR (as
// `tensorboard --logdir` serves its logs), until Ctrl-C: finished runs stay visible after their
// processes are gone. A coordinator without agents holds them as finished experiments (actors/
// coordinator_runs.hpp find_runs_under); its HTTP server refuses every change.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "actors/coordinator.hpp"
#include "actors/coordinator_runs.hpp"
#include "actors/http/http_server.hpp"
#include "actors/system_config.hpp"
#include "runtime/api/api_auth.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/stop_signals.hpp"
#include "tools/ui_server.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct UiOptions {
  std::string dir;
  std::string listen = "0";  // [HOST:]PORT
  int depth = 4;
};

int ui_main(const UiOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) return fail(fmt::format("{}: no such directory", o.dir));
  auto runs = find_runs_under(o.dir, o.depth);
  if (runs.empty())
    return fail(fmt::format("{}: no run directory (one with a state/ store) within {} folders of it", o.dir, o.depth));
  block_stop_signals();
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  // Its state directory takes nothing (no run starts here); the runs are read where they are.
  const auto scratch = fs::temp_directory_path() / ("cerebro-ui-" + api::random_token(6));
  coordinator_config gateway{api::random_token(), scratch.string(), "ui"};
  gateway.fixed_agents = true;
  gateway.parts.find_stored = [runs](const std::string&) { return runs; };
  auto coordinator = spawn_coordinator(system, gateway);
  auto server = start_embedded_ui(system, coordinator, gateway.token, o.listen, scratch.string(), true);
  if (!server) {
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
    return 1;
  }
  fmt::print(stderr, "serving {} runs under {} (read only) until Ctrl-C:\n", runs.size(), o.dir);
  for (const auto& run : runs) fmt::print(stderr, "  {}  {}\n", run.id, run.run_dir);
  std::fflush(stderr);
  wait_for_stop_signal();
  server->stop();
  fs::remove_all(scratch, ec);
  leave_now(0);
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<UiOptions>();
  command.add_option("dir", o->dir, "A folder holding run directories (runs/, a coordinator's --state, a run's --out)")
      ->required();
  command
      .add_option("--listen", o->listen, "[HOST:]PORT to serve on (host 127.0.0.1 unless given; port 0: any free port)")
      ->capture_default_str();
  command.add_option("--depth", o->depth, "How many folders down to look for run directories")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  return [o] { return ui_main(*o); };
}

const CommandRegistrar registrar{
    {"ui", "Serve the dashboard and the API, read only, over the finished runs under a folder", 72, setup}};

}  // namespace

}  // namespace cerebro::cli
