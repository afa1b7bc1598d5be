#pragma once
// Applies datasets::Augmentation to a training batch (LibTorch; models/ only).

#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include "datasets/augmentation.hpp"

namespace cerebro::models {

// `batch` is {n, channels, height, width}; returns the augmented copy. Every draw comes from `generator`,
// per example: a crop offset in [0, 2 * padding] on each axis, then a flip with probability 1/2.
torch::Tensor augment_batch(const torch::Tensor& batch, const datasets::Augmentation& augmentation,
                            at::Generator& generator);

}  // namespace cerebro::models
