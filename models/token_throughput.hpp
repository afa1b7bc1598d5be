#pragma once
// A language-model unit's training speed against a plain LibTorch loop over the same model and batches
// (`cerebro bench --tokens`, docs/BENCHMARKS.md "Tokens per second"). Torch-free face.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::models {

struct TokenPass {
  double unit_s = 0;   // train_unit's training pass (UnitOutput::train_s: no restore, validation or save)
  double plain_s = 0;  // the plain loop's pass
  int64_t tokens = 0;  // next tokens predicted in one pass (pad left out), the same in both
};

// One pass over `partition` (token windows) of the config `params` (a zoo transformer) each way, on this
// thread, from the same initial weights (seeded with `seed`) and in the same batch order. The plain loop
// is what a user would write: the registry's module, torch::optim::Adam with the config's lr, next-token
// cross-entropy with ignore_index 0, randperm and index_select batches.
Result<TokenPass> unit_against_plain_loop(const nlohmann::json& params, const ShapeInfo& shape,
                                          const datasets::Dataset& partition, uint64_t seed);

}  // namespace cerebro::models
