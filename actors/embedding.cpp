#include "actors/embedding.hpp"

#include <filesystem>
#include <mutex>

#include <caf/io/all.hpp>

#include "actors/actors.hpp"
#include "actors/embedding_submit.hpp"
#include "actors/experiment_runner.hpp"
#include "models/run_setup.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/net/cluster_messages.hpp"

namespace cerebro {

void configure_actor_system(caf::actor_system_config& config, bool load_middleman) {
  // Here because embedders call this before any actor thread exists: the
  // allocator's one-arena setting reaches only threads that have not
  // allocated yet (models/unit_trainer.hpp).
  models::configure_allocator();
  register_message_types(config);
  register_cluster_message_types(config);
  config.add_message_type<leaderboard_entry>("cerebro::leaderboard_entry");
  config.add_message_type<std::vector<leaderboard_entry>>("std::vector<cerebro::leaderboard_entry>");
  config.add_message_type<experiment_result>("cerebro::experiment_result");
  if (load_middleman) config.load<caf::io::middleman>();
}

struct LocalCluster::Shared {
  std::mutex run_mutex;  // held by the running experiment: one at a time
  bool stopped = false;  // guarded by run_mutex
  agent_handles local;
  int workers = 0;
};

namespace {

Result<experiment_result> run_one(caf::actor_system& system, LocalCluster::Shared& shared,
                                  const ExperimentRequest& request, const experiment_listener_actor& listener) {
  std::lock_guard<std::mutex> lock(shared.run_mutex);
  if (shared.stopped) return Status::failed_precondition("the local cluster was stopped before the experiment started");
  RunOptions options;
  options.spec = request.spec;
  options.experiment_id = request.experiment_id;
  options.out_dir = request.run_dir;
  ClusterView cluster;
  cluster.agents.push_back({"local", shared.local.agent, shared.local.workers});
  cluster.fixed = true;
  const auto& id = request.experiment_id;
  RunObserver observer;
  if (listener) {
    observer.line = [&](const std::string& line) {
      progress_update p;
      p.event = line;
      caf::anon_send(listener, progress_atom::value, id, p);
    };
    observer.progress = [&](const progress_update& p) { caf::anon_send(listener, progress_atom::value, id, p); };
  }
  auto summary = run_experiment(system, options, cluster, observer);
  if (!summary.ok()) return summary.status().with_context(id);
  return result_from_summary(id, request.run_dir, *summary);
}

}  // namespace

LocalCluster::LocalCluster(caf::actor_system& system, LocalClusterOptions options)
    : system_(system), shared_(std::make_shared<Shared>()) {
  if (options.work_dir.empty()) throw Error("LocalCluster: options.work_dir is required (the shard cache)");
  shared_->workers = options.workers > 0 ? options.workers : default_workers();
  // The agent reads the run directory's shards in place (shared filesystem):
  // the same placement path as a cluster, without the transfer.
  auto agent_dir = (std::filesystem::path(options.work_dir) / "agent").string();
  shared_->local = spawn_agent(system, agent_config{"local", agent_dir, shared_->workers, true});
}

LocalCluster::~LocalCluster() {
  {
    std::lock_guard<std::mutex> lock(shared_->run_mutex);
    shared_->stopped = true;
  }
  caf::anon_send_exit(shared_->local.agent, caf::exit_reason::user_shutdown);
  for (auto& w : shared_->local.workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
}

int LocalCluster::workers() const { return shared_->workers; }

Result<experiment_result> LocalCluster::run(const ExperimentRequest& request,
                                            const experiment_listener_actor& listener) {
  return run_one(system_, *shared_, request, listener);
}

void LocalCluster::submit(ExperimentRequest request, experiment_listener_actor listener) {
  submit_detached(system_, std::move(request), std::move(listener),
                  [shared = shared_](caf::actor_system& system, const ExperimentRequest& r,
                                     const experiment_listener_actor& l) { return run_one(system, *shared, r, l); });
}

}  // namespace cerebro
