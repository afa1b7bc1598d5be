#pragma once
// Finishing a run once training is over: each config's final status, the
// leaderboard, the best config's test score and exported model, summary.json
// and metrics.csv in the run directory, and the store marked finished (so
// the run is never resumed).

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/run/run_control.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

class LiveTensorBoard;

// What finishing needs of a trained model, which takes LibTorch:
// models/trained_models.hpp implements it (the core does not link LibTorch).
class TrainedModels {
 public:
  struct Score {
    double accuracy = 0;
    double loss = 0;
    std::map<std::string, double> metrics;  // every named metric ("accuracy", "r2" ...)
  };
  virtual ~TrainedModels() = default;
  // The score on the run's test set of the model `params` with weights `state`.
  virtual Result<Score> test(const nlohmann::json& params, const std::string& state) = 0;
  // Writes that model as a TorchScript file at `path`.
  virtual Status export_model(const nlohmann::json& params, const std::string& state, const std::string& path) = 0;
  // Its trainable parameters and milliseconds per test example (the built-in
  // objectives parameters and inference_ms). Default: not available.
  struct Cost {
    int64_t parameters = 0;
    double inference_ms = 0;
  };
  virtual Result<Cost> cost(const nlohmann::json& /*params*/, const std::string& /*state*/) {
    return Status::failed_precondition("the model's cost cannot be measured here");
  }
  // A few test images with what the model makes of them, for the report and the dashboard: a JSON list
  // of {"image": a PNG data: URI, "width" and "height": the example's pixels, "scale": the picture's pixels
  // per example pixel, and "caption" with "references"
  // (captioning) or "boxes" with "truth" ({x, y, width, height, label[, score]} in example pixels,
  // detection)}. Default, and for the tasks without pictures: not available.
  virtual Result<nlohmann::json> examples(const nlohmann::json& /*params*/, const std::string& /*state*/) {
    return Status::failed_precondition("no pictures of this task's examples");
  }
};

// What the run was, beyond its spec and store.
struct FinishedTraining {
  int workers = 0;
  int partitions = 0;
  double wall_s = 0;       // the training's wall time (this process)
  double unit_span_s = 0;  // the scheduler's sum of unit spans (this process)
  std::string replay_of;   // the run this one replayed, if any
  // The TensorBoard logs written while it trained (runtime/viz/tensorboard_live.hpp),
  // completed at the end; without them (or if they failed) the logs are written whole.
  LiveTensorBoard* tensorboard = nullptr;
};

// Returns the summary (also written as summary.json). A failed export is not
// an error (the summary says model_file null and `say` hears why); a failed
// test score or write is, and the run stays unfinished.
Result<nlohmann::json> finish_run(StateStore& store, const ExperimentControl& control, const ExperimentSpec& spec,
                                  const FinishedTraining& training, TrainedModels& models, const std::string& run_dir,
                                  const Say& say);

}  // namespace cerebro
