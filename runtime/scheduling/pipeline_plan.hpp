#pragma once
// Pipeline stages for big models, the plain part: how much memory
// a config's training state takes, how a chain of layers splits into k
// consecutive stages balanced by that memory, and whether a config must (or
// asked to) train as a pipeline at all. No LibTorch: models/pipeline measures
// a model's chain and hands the numbers in; the tests drive this directly.
//
// The rule (docs/CLUSTER.md "Pipeline stages"): a config trains whole unless
// its training state (parameters, their gradients, buffers and optimizer
// state) exceeds a worker's memory budget, or it asks for stages
// (`[space] parallelism = "pipeline"`). Then it is split into as few stages
// as make every stage fit (or the `stages` it asked for), never more than
// there are workers or top-level children.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.hpp"

namespace cerebro {

// Bytes of one float32 element: parameters, gradients and optimizer state.
constexpr int64_t kBytesPerElement = 4;

// The training state of `parameters` trainable elements and `buffer_elements`
// buffer elements (BatchNorm statistics) under an optimizer that keeps
// `optimizer_tensors_per_parameter` tensors shaped like each parameter
// (SGD 0, SGD with momentum 1, Adam and AdamW 2: models/pipeline.hpp
// optimizer_state_tensors).
struct TrainingMemory {
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t buffer_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t total() const { return parameter_bytes + gradient_bytes + buffer_bytes + optimizer_bytes; }
};
TrainingMemory training_memory(int64_t parameters, int64_t buffer_elements, int optimizer_tensors_per_parameter);

// Splits `weights` (one per link of a chain, in order) into `stages`
// consecutive non-empty runs whose largest sum is as small as possible.
// Returns the index of each stage's first link (the first is 0). Requires
// 1 <= stages <= weights.size() (invalid_argument otherwise).
Result<std::vector<size_t>> balanced_split(const std::vector<int64_t>& weights, int stages);

// What a config asked for: `[space] parallelism` and `stages`.
struct PipelineRequest {
  bool forced = false;  // parallelism = "pipeline"
  int stages = 0;       // 0: as few as fit the budget (2 when forced without a budget)
};

// Where the config would train: the workers a pipeline may span and the
// memory one worker may give a config's training state (0: no limit).
struct PipelineLimits {
  int workers = 1;
  int64_t budget_bytes = 0;
};

// A config's chain as measured by models/pipeline: each link's (top-level
// child's) name and training memory in bytes, or why it has no chain.
struct ModelChain {
  std::vector<std::string> link_names;
  std::vector<int64_t> link_bytes;
  std::string not_a_chain;  // non-empty: the model cannot be split, and why
  int64_t total_bytes() const;
};

// The decision: stages == 1 trains the config whole.
struct PipelinePlan {
  int stages = 1;
  std::vector<size_t> first_link;    // per stage
  std::vector<int64_t> stage_bytes;  // per stage
  int64_t total_bytes = 0;
  std::string reason;  // why split (or why not), for logs and summaries
};

// Decides how a config trains. Errors (invalid_argument) name the key:
// "[space] parallelism = \"pipeline\"" for a model that cannot be split,
// "[space] stages" for more stages than workers or top-level children, and
// "[cluster] model_memory_mb" for a model whose stages do not fit even when split
// as far as the workers and children allow.
Result<PipelinePlan> plan_pipeline(const ModelChain& chain, const PipelineRequest& request,
                                   const PipelineLimits& limits);

// A batch of `batch` examples cut into `micro_batches` consecutive
// micro-batches [begin, end) (GPipe): the first batch % m one example larger;
// never an empty one (fewer micro-batches when the batch is smaller).
std::vector<std::pair<int64_t, int64_t>> micro_batch_ranges(int64_t batch, int micro_batches);

}  // namespace cerebro
