#pragma once
// The torch-free face of models/: what workers, the scheduler and the CLI call
// to initialise, train, evaluate and export a config. Model state travels as
// bytes (weights, buffers AND optimizer state), so a hop is exact.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/augmentation.hpp"
#include "datasets/dataset.hpp"
#include "datasets/task_kind.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::models {

// Torch-free mirror of DataShape, for callers that must not include torch.
// num_classes is the model's output width: classes, regression targets or
// multilabel labels. The task picks the built-in loss and metrics.
struct ShapeInfo {
  std::vector<int64_t> sample_shape;
  int64_t num_classes = 0;
  datasets::TaskKind task = datasets::TaskKind::classification;
  // Regression: the training targets' stddev (the shards hold standardized
  // targets): mse and mae are reported in the targets' own units.
  std::vector<float> target_stddev;
  // Captioning: the hypotheses per image a validation decodes its captions with ([experiment] beam;
  // 1: greedy, models/captions.hpp beam_captions).
  int64_t beam = 1;
};

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // classification's (0 for the other tasks and for templates with metrics)
  // Every named metric: the task's built-ins (models/task.hpp), or a training
  // template's own metrics instead.
  std::map<std::string, double> metrics;
  int64_t examples = 0;
};

// Sets LibTorch's intra-op thread count for this process (every worker).
void configure_threads(int intra_op_threads);

// Keeps memory freed by training in the process's malloc arena instead of
// returning it to the kernel (glibc: mmap threshold 32 MB, trim threshold
// 256 MB, one arena for every thread). Every training step allocates and
// frees its activations and gradients; by default glibc unmaps or trims them,
// and every step then faults those pages in again: 46 to 139 page faults per
// step for the zoo's cnn at batch 64, and on this VM kind (a paravirtualised
// guest, where a fault is dear) the kernel took 21.5 % of a gang's samples,
// mostly faults (perf; docs/BENCHMARKS.md "The training path"). Threads' own arenas
// unmap their 64 MB heaps whenever they empty: at batch 256 that made some
// units 3 to 4 times slower. The cost: the arena keeps up to the peak a
// process ever used. Process-wide; only threads that have not allocated yet
// follow the one-arena setting, so it runs once at process start: cerebro's
// main, and configure_actor_system for embedders (docs/EMBEDDING.md). The
// cerebro binary links tcmalloc, which replaces glibc's malloc (one arena is
// one lock that a process's workers wait on); these settings then have no
// effect there, and apply to embedders and tests that keep glibc's.
// It also makes models/thread_block_cache LibTorch's CPU allocator: while a
// thread trains a unit, the large buffers it frees stay with that thread
// (one process's workers otherwise trade them between cores every step).
void configure_allocator();

// A node's relative speed: GFLOP/s of a fixed single-threaded matrix-multiply
// workload, measured for about 0.2 s.
double calibrate_speed();

// Checks a config's hyper-parameters: types, ranges and that the model reads
// every key (an unknown key is an error naming it). Does not touch data.
Status check_params(const nlohmann::json& params, const ShapeInfo& shape);

// Checks a training template's methods on a pilot batch of `pilot`: `loss`
// must return a scalar, `metrics` a dict of scalars that holds `metric` (the
// quantity the experiment ranks by, e.g. "ndcg"; "loss" needs nothing). A
// model without its own metrics must rank by a built-in metric
// (`builtin_metric`: one the task computes). Errors name the method.
Status check_template(const nlohmann::json& params, const ShapeInfo& shape, const datasets::Dataset& pilot,
                      const std::string& metric, bool builtin_metric);

// Builds the config's model from `seed`, runs the pilot forward pass on a few
// examples of `pilot` and returns the serialized initial state. An error means
// the config does not fit the data (its message says why); other configs go on.
Result<std::string> initial_state(const nlohmann::json& params, const ShapeInfo& shape, const datasets::Dataset& pilot,
                                  uint64_t seed);

struct UnitInput {
  const nlohmann::json* params = nullptr;
  ShapeInfo shape;
  const std::string* state = nullptr;             // from initial_state or a previous unit
  const datasets::Dataset* partition = nullptr;   // borrowed, not copied
  const datasets::Dataset* validation = nullptr;  // set: evaluate after training
  uint64_t seed = 0;                              // batch order and dropout of this unit
  datasets::Augmentation augmentation;            // of the training batches, drawn from `seed`
  // A memory-mapped (out-of-core) partition: gather the next batches on a background thread while this one
  // trains (datasets/batch_read_ahead.hpp). The same batches either way; false gathers them in this thread.
  // Off by default, as measured (tools/bench_data ooc, interleaved binaries, quiet 2-core VM): with one
  // worker per core the extra thread competes with training, and out of core / in memory went from
  // 0.975-0.997 (warm page cache) and 0.990 (cold) without it to 1.06-1.11 with it. Loading a partition
  // reads it once for its checksum, so its pages are resident when training starts unless the partition
  // is larger than RAM, the case read-ahead is for (not measurable here).
  bool read_ahead = false;
};

struct UnitOutput {
  std::string state;
  double train_loss = 0;
  int64_t examples = 0;
  bool diverged = false;  // loss became NaN/inf: the state is the last finite one
  std::optional<Evaluation> validation;
  double restore_s = 0, train_s = 0, validate_s = 0, save_s = 0;
};

// Trains one unit: one pass over `partition` in a seeded random order.
Result<UnitOutput> train_unit(const UnitInput& input);

Result<Evaluation> evaluate_state(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                                  const datasets::Dataset& data);

// What a trained model costs (the built-in objectives of docs/SEARCH.md,
// "Several objectives"): its
// trainable parameters, and the mean milliseconds per example to predict
// `data` in batches of 256 in this thread (the prediction only, no loss).
struct ModelCost {
  int64_t parameters = 0;
  double inference_ms = 0;
};
Result<ModelCost> model_cost(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                             const datasets::Dataset& data);

// The trainable parameters of the model `params` builds for `shape`.
Result<int64_t> parameter_count(const nlohmann::json& params, const ShapeInfo& shape);

// Writes the model in `state` as a TorchScript file (torch::jit::load-able).
Status export_model(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                    const std::string& path);

// The "ideal" of the benchmark: a plain LibTorch loop training one config for
// `epochs` passes over `train` (shuffled per epoch) with a validation pass
// after each, in this thread, with no system around it.
struct ReferenceRun {
  double seconds = 0;
  double final_val_accuracy = 0;
};
Result<ReferenceRun> reference_training(const nlohmann::json& params, const ShapeInfo& shape,
                                        const datasets::Dataset& train, const datasets::Dataset& validation, int epochs,
                                        uint64_t seed);

}  // namespace cerebro::models
