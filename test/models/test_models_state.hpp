#pragma once
// Decodes a serialized model state (ours, models/state_format.hpp, or a
// LibTorch archive) into named tensors so two states can be compared bit for
// bit. An archive's bytes are not canonical: LibTorch's
// optimizer archive keys its per-parameter state by the TensorImpl address
// the parameter had when it was saved (and stores that state in hash-map
// order), so two equal states saved by different models differ as bytes.
// Here every optimizer entry is renamed by the parameter's position instead.

#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include <torch/torch.h>

#include "models/state_format.hpp"

namespace cerebro::models::testing {

struct DecodedState {
  std::map<std::string, torch::Tensor> tensors;  // "model/<key>", "optimizer/group<g>/param<i>/<key>"
  int64_t parameters = 0;                        // in the optimizer's parameter groups
  int64_t parameters_with_optimizer_state = 0;
};

inline void read_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                         std::map<std::string, torch::Tensor>& out) {
  for (const auto& key : archive.keys()) {
    torch::Tensor t;
    if (archive.try_read(key, t, true)) out[prefix + key] = t;
  }
}

// The layout of the optimizer part is LibTorch's own (torch/optim/serialize.h):
// "state"/<address>/... and "param_groups"/"param_groups/<g>"/"params/<i>" = <address>.
inline DecodedState decode_state(const std::string& bytes) {
  DecodedState d;
  if (detail::is_raw_state(bytes)) {  // our own format (models/state_format.hpp): the same names
    auto raw = detail::decode_raw_state(bytes);
    for (auto& [name, tensor] : raw.tensors) d.tensors[name] = tensor;
    d.parameters = raw.parameters;
    d.parameters_with_optimizer_state = raw.parameters_with_optimizer_state;
    return d;
  }
  std::istringstream in(bytes);
  torch::serialize::InputArchive top;
  top.load_from(in);
  read_tensors(top, "model/", d.tensors);

  torch::serialize::InputArchive optimizer, state, groups;
  top.read("optimizer", optimizer);
  optimizer.read("state", state);
  optimizer.read("param_groups", groups);
  torch::Tensor group_count;
  groups.read("param_groups/size", group_count);
  for (int64_t g = 0; g < group_count.item<int64_t>(); ++g) {
    torch::serialize::InputArchive group;
    groups.read("param_groups/" + std::to_string(g), group);
    torch::Tensor param_count;
    group.read("params/size", param_count);
    for (int64_t i = 0; i < param_count.item<int64_t>(); ++i) {
      ++d.parameters;
      c10::IValue address;
      group.read("params/" + std::to_string(i), address);
      torch::serialize::InputArchive param_state;
      if (!state.try_read(address.toStringRef(), param_state)) continue;
      ++d.parameters_with_optimizer_state;
      read_tensors(param_state, "optimizer/group" + std::to_string(g) + "/param" + std::to_string(i) + "/", d.tensors);
    }
  }
  return d;
}

inline bool bitwise_equal(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || !a.sizes().equals(b.sizes())) return false;
  auto ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// Empty when equal; otherwise names the first difference.
inline std::string state_difference(const std::string& a_bytes, const std::string& b_bytes) {
  auto a = decode_state(a_bytes), b = decode_state(b_bytes);
  if (a.tensors.size() != b.tensors.size())
    return "different tensor counts: " + std::to_string(a.tensors.size()) + " vs " + std::to_string(b.tensors.size());
  for (const auto& [name, tensor] : a.tensors) {
    auto it = b.tensors.find(name);
    if (it == b.tensors.end()) return name + " missing from the second state";
    if (!bitwise_equal(tensor, it->second)) return name + " differs";
  }
  return "";
}

}  // namespace cerebro::models::testing
