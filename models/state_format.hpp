#pragma once
// Inside models/ only (it includes LibTorch): the state format of our own.
// A config's state (the model's named tensors and the
// optimizer's per-parameter state) as raw tensor bytes behind a small header,
// with a CRC-32 at the end. LibTorch's archive (a TorchScript zip, written and
// read through the TorchScript serializer) cost about 1 ms to save and 1 ms to
// load for a small MLP, a third of a small unit's fixed cost; this format
// copies the bytes and nothing else.
//
// Layout (little-endian, what every supported host is):
//   "CRBSTATE"  u32 version (1)  u32 optimizer kind (1 adam, 2 adamw, 3 sgd)
//   u64 model tensors, then each tensor record
//   u64 parameter groups; per group u64 parameters, then per parameter (in
//     the group's order): u8 present; if present: adam/adamw i64 step, u8 fields
//     (bit 0 exp_avg, 1 exp_avg_sq, 2 max_exp_avg_sq), the present tensors;
//     sgd u8 fields (bit 0 momentum_buffer), the tensor
//   u32 CRC-32 (zlib's, runtime/base/checksum.hpp) of every byte before it
// A tensor record: i8 scalar type, u8 dims, i64 size per dim, the contiguous bytes.
//
// The optimizer's options (lr, betas, ...) are not stored: they come from the
// config's hyper-parameters, which the run keeps, and nothing changes them
// during training. States written before this format are LibTorch archives
// (zip files, "PK..."): restore_state in trainer.cpp reads both.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "models/model.hpp"

namespace cerebro::models::detail {

inline constexpr std::string_view kRawStateMagic = "CRBSTATE";
inline constexpr uint32_t kRawStateVersion = 1;

// Whether `bytes` start like a state in this format (not a LibTorch archive).
bool is_raw_state(std::string_view bytes);

// Whether `optimizer` is a kind this format stores (adam, adamw, sgd); others
// are saved as LibTorch archives.
bool raw_state_supports(const torch::optim::Optimizer& optimizer);

// The state of `model` and `optimizer` in this format, written into one
// buffer of the exact size.
std::string save_raw_state(Model& model, torch::optim::Optimizer& optimizer);

// Restores `model` and `optimizer` from `bytes` (is_raw_state). Throws
// cerebro::Error: corruption when the bytes fail their checksum or framing,
// invalid_argument when the version, the optimizer kind or a tensor's type
// or shape does not match the config. The optimizer's previous state is
// replaced entirely (a reused trainee keeps nothing of its last unit).
void restore_raw_state(Model& model, torch::optim::Optimizer& optimizer, std::string_view bytes);

// The tensors of a state in this format by name, for comparing two states bit
// for bit (tests): "model/count", "model/s<i>",
// "optimizer/group<g>/param<i>/<field>" (field: step, exp_avg, exp_avg_sq,
// max_exp_avg_sq, momentum_buffer), as test/models/test_models_state.hpp decodes a
// LibTorch archive. Also the number of optimizer parameters and of those with
// state.
struct RawStateTensors {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  int64_t parameters = 0;
  int64_t parameters_with_optimizer_state = 0;
};
RawStateTensors decode_raw_state(std::string_view bytes);

}  // namespace cerebro::models::detail
