#pragma once
// A training template's batch as named fields (docs/TEMPLATES.md "Structured tasks"): a TorchScript
// module whose forward takes a Dict[str, Tensor] gets these instead of the task's one input tensor, and
// its loss and metrics, when their target is a Dict[str, Tensor], get the target's fields.
//
//   language_model  input  tokens long [B, T] (pad 0), lengths long [B] (tokens that are not pad)
//                   target the same fields
//   captioning      input  image float [B, C, H, W], tokens long [B, T] (bos, a caption, eos, pad),
//                          lengths long [B]
//                   target tokens, lengths
//   detection       input  image float [B, C, H, W]
//                   target boxes float [B, M, 4] (x, y, width, height in pixels), labels long [B, M]
//                          (class indices, -1 past an image's boxes), counts long [B]
//
// Inside models/ only (it includes LibTorch).

#include <string>

#include "models/model.hpp"

namespace cerebro::models {

using Fields = c10::Dict<std::string, torch::Tensor>;

// Throw cerebro::Error for a task without fields (classification, regression, multilabel).
Fields input_fields(const DataShape& shape, const torch::Tensor& input);
Fields target_fields(const DataShape& shape, const torch::Tensor& target);

}  // namespace cerebro::models
