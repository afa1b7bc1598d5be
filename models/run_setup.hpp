#pragma once
// Opening a run for training: a new run is set up (data prepared, store
// created, initial states written with their pilot checks); an unfinished one
// is reopened and recovered (runtime/run/run_recovery.hpp decides; this loads
// its data). Plain code, no actor: it needs the models (pilot checks, cost
// probes), so it sits in models/; actors/experiment_runner.cpp calls it before
// training and again when a damaged checkpoint sends the run back to recovery.

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datasets/prepare.hpp"
#include "datasets/prepared_cache.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/run/run_control.hpp"
#include "runtime/run/run_options.hpp"
#include "runtime/run/warm_start.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/pipeline_plan.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/viz/tensorboard_live.hpp"

namespace cerebro {

// A run's data and configs.
struct Setup {
  std::vector<ConfigParams> configs;
  std::string data_dir;         // the prepared partitions (this run's, or reused)
  datasets::PreparedData data;  // memory-mapped; of the partitions only partition 0 (the pilot) is loaded
  models::ShapeInfo shape;
  datasets::Augmentation augmentation;  // from the spec's [data] augment
  int workers = 0;
  int partitions = 0;
  // Configs that train as a pipeline and their stage counts, as
  // planned at the run's start (kept in the store's meta "pipeline_stages":
  // a resumed run keeps its configs' splits, whatever its workers now).
  std::map<ConfigId, int> pipeline_stages;
};

// Everything training needs once the run's store is open: for a new run after
// setup and the initial states, for a resumed one after recovery.
struct Prepared {
  ExperimentSpec spec;
  Setup setup;
  std::shared_ptr<StateStore> store;
  std::shared_ptr<ExperimentControl> control;
  std::map<ConfigId, std::string> params_json;
  std::vector<WarmConfig> warm;  // what the run is warm-started with ([experiment] warm_start)
  // Its TensorBoard logs, written while it trains (made by train(), completed by finish_run).
  std::shared_ptr<LiveTensorBoard> tensorboard;
  // The workers of the agents live now, while it trains (0 before): agents
  // join and leave a cluster mid-run. Written by the run's thread, read where
  // configs are created (the scheduler's, for a search's proposals).
  std::shared_ptr<std::atomic<int>> live_workers = std::make_shared<std::atomic<int>>(0);
};

// Makes config `id` with `params` durable: its initial state (a fresh
// initialisation with its pilot check, or, with from_checkpoint, the latest
// state of the warm-start config with the same params) and its record
// (failed, with the reason, when the pilot check fails or its plan is
// refused). Used for the configs a run starts with and for those its search
// proposes (tpe). Returns the stages it trains over (1: whole): a run's own
// config as set_up planned it; any other is planned here the same way
// (models::planned_stages under pipeline_limits_of), and one that trains as a pipeline starts from a framed
// initial state, its stage count added to the store's meta "pipeline_stages"
// before its record (so before it can be scheduled). The caller sets the
// stages in the control before the config joins the schedule.
Result<int32_t> create_config(const Prepared& r, ConfigId id, const nlohmann::json& params);

// Config `params`'s trainable parameters when `count` (an objective is
// `parameters`), for store_new_config; nothing when the model cannot be built.
std::optional<int64_t> parameters_to_keep(bool count, const nlohmann::json& params, const models::ShapeInfo& shape);

// The limits a config's plan is made under on this run: its workers (the
// live ones once it trains, so a config created after agents joined may
// take more stages than the run started with) and [cluster]
// model_memory_mb (what create_config and steering use; set_up plans the
// run's own configs on its starting workers).
PipelineLimits pipeline_limits_of(const Prepared& r);

// Removes the run directory unless the run got far enough to keep it.
class RunDirGuard {
 public:
  explicit RunDirGuard(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~RunDirGuard() {
    if (!keep_) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  RunDirGuard(const RunDirGuard&) = delete;
  RunDirGuard& operator=(const RunDirGuard&) = delete;
  void keep() { keep_ = true; }

 private:
  std::filesystem::path dir_;
  bool keep_ = false;
};

// A new run in the (empty) directory `dir`: keeps the directory (guard.keep())
// once the store holds a resumable record.
// `workers` are the cluster's now.
Result<Prepared> start_new(const RunOptions& options, int workers, const std::filesystem::path& dir, RunDirGuard& guard,
                           const Say& say);

// The unfinished run in `dir`, on its store (opened here unless given: a run
// recovering from a damaged checkpoint keeps its store open).
Result<Prepared> reopen(const RunOptions& options, int workers, const std::filesystem::path& dir, const Say& say,
                        std::shared_ptr<StateStore> open_store = nullptr);

// Prepares the spec's dataset into `out_dir` (partitions: 0 = the spec's, else
// one per worker): what `cerebro prepare` and a run's setup do.
Result<datasets::Manifest> prepare_dataset(const ExperimentSpec& spec, const std::string& out_dir, int partitions,
                                           const std::function<void(const std::string&)>& line = {});

// Finds the spec's prepared dataset in the shared cache
// (datasets/prepared_cache.hpp, at default_cache_dir()) or prepares it there:
// what a run, the REPL, the coordinator and `cerebro prepare` without --out do.
Result<datasets::CachedData> prepare_into_cache(const ExperimentSpec& spec, int partitions,
                                                const std::function<void(const std::string&)>& line = {});

// The number of workers a run uses when neither flag nor spec says.
int default_workers();

}  // namespace cerebro
