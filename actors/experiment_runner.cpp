#include "actors/experiment_runner.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/run_follower.hpp"
#include "models/run_setup.hpp"
#include "models/predict.hpp"
#include "models/trained_models.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/run/run_finisher.hpp"

namespace fs = std::filesystem;

namespace cerebro {

// A run's life: opened (set up, or reopened and recovered: run_setup.cpp),
// trained (run_follower.cpp), finished (runtime/run/run_finisher.hpp); a
// damaged checkpoint found while training sends it back to recovery.
Result<nlohmann::json> run_experiment(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                                      const RunObserver& observer) {
  Say say = [&](const std::string& line) {
    if (observer.line) observer.line(line);
  };
  fs::path dir = options.out_dir;
  if (auto v = validate_name("experiment id", options.experiment_id); !v.ok()) return v;
  if (cluster.agents.empty()) return Status::unavailable("the cluster has no agents to run on");
  std::error_code ec;
  Result<Prepared> prepared = Status::internal("not prepared");
  if (options.resume) {
    if (!fs::is_directory(dir, ec))
      return Status::not_found(fmt::format("{}: no such run directory to resume", dir.string()));
    prepared = reopen(options, cluster.total_workers(), dir, say);
  } else {
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
      return Status::failed_precondition(
          fmt::format("{}: the run directory already exists and is not empty", dir.string()));
    fs::create_directories(dir, ec);
    if (ec) return Status::io_error(fmt::format("{}: cannot create the run directory: {}", dir.string(), ec.message()));
    RunDirGuard guard(dir);  // ours from here: removed if the setup fails
    prepared = start_new(options, cluster.total_workers(), dir, guard, say);
  }
  if (!prepared.ok()) return prepared.status();
  if (auto thrown = FaultInjection::instance().crash_point("run_prepared"); !thrown.ok()) throw Error(thrown);
  models::configure_threads(prepared->spec.cluster.threads_per_worker);
  constexpr int kMaxRecoveries = 3;
  for (int recoveries = 0;; ++recoveries) {
    auto done = train(system, options, cluster, *prepared, observer, say);
    if (!done.ok()) return done.status();
    if (!done->damaged_state) {
      const auto& s = prepared->setup;
      models::TorchTrainedModels models(s.shape, s.data.test, models::model_info(s.data.manifest));
      FinishedTraining training{s.workers,         s.partitions,      done->wall_s,
                                done->unit_span_s, options.replay_of, prepared->tensorboard.get()};
      return finish_run(*prepared->store, *prepared->control, prepared->spec, training, models, dir.string(), say);
    }
    if (recoveries == kMaxRecoveries)
      // Each recovery was for a damaged checkpoint (done->damaged_state).
      return Status::corruption(
          fmt::format("the experiment stopped: {} ({} recoveries already)", done->error, recoveries));
    // One code path: the same resume as after a crash, on the open store.
    say(fmt::format("warning: {}; resuming from the newest intact checkpoints", done->error));
    prepared = reopen(options, cluster.total_workers(), dir, say, prepared->store);
    if (!prepared.ok()) return prepared.status();
  }
}

Result<nlohmann::json> run_embedded(const RunOptions& options, const RunObserver& observer) {
  int workers = options.workers > 0                ? options.workers
                : options.spec.cluster.workers > 0 ? options.spec.cluster.workers
                                                   : default_workers();
  // Before anything is written (train() checks again on a cluster).
  if (auto size = check_gang_size(options.spec.cluster, workers); !size.ok()) return size;
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  // One agent in this process, on the run directory's own files: the same
  // placement path as a cluster, with the transfer skipped (shared filesystem).
  auto local = spawn_agent(system, agent_config{"local", (fs::path(options.out_dir) / "agent").string(), workers, true,
                                                options.spec.cluster.memory_mb << 20});
  // The system's destructor waits for its actors: they are told to exit
  // however this scope ends, or an exception (a bug) would hang the process
  // instead of reaching the caller.
  struct StopLocalAgent {
    const agent_handles& local;
    ~StopLocalAgent() {
      caf::anon_send_exit(local.agent, caf::exit_reason::user_shutdown);
      for (auto& w : local.workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    }
  } stop{local};
  ClusterView cluster;
  cluster.agents.push_back({"local", local.agent, local.workers});
  cluster.fixed = true;
  return run_experiment(system, options, cluster, observer);
}

}  // namespace cerebro
