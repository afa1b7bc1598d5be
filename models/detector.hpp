#pragma once
// The zoo's `detector` (docs/TASKS.md "Models"): a small single-stage, anchor-free detector in the manner
// of CenterNet on a resnet backbone, batch first.
//
//   input     [B, C, H, W] images
//   backbone  per entry of `channels` a resnet stage (models/conv_stages.hpp): a stride-2 3x3
//             convolution, batch norm and relu, then a residual block of two 3x3 convolutions
//   head      a 3x3 convolution to `head` channels and relu, then a 1x1 convolution to the K + 4 maps of
//             models/detections.hpp: each class' heatmap, the object's size and its centre's offset
//
// The heatmaps' biases start at log(0.1 / 0.9), as CenterNet's do, so that the first steps' focal loss
// is not swamped by the empty cells.

#include <vector>

#include "models/conv_stages.hpp"
#include "models/zoo.hpp"

namespace cerebro::models {

struct DetectorOptions {
  DetectorOptions(std::vector<int64_t> image_shape, int64_t classes)
      : image_shape_(std::move(image_shape)), classes_(classes) {}
  TORCH_ARG(std::vector<int64_t>, image_shape);  // {C, H, W}
  TORCH_ARG(int64_t, classes);
  TORCH_ARG(std::vector<int64_t>, channels) = {32, 64};
  TORCH_ARG(int64_t, head) = 64;
};

class DetectorImpl : public torch::nn::Module {
 public:
  explicit DetectorImpl(const DetectorOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);

 private:
  DetectorOptions options_;
  ConvStages backbone_;
  torch::nn::Conv2d head_conv_{nullptr}, head_out_{nullptr};
};
TORCH_MODULE(Detector);

// Registers `detector` with the zoo (register_zoo_models calls it).
void register_detector_model();

}  // namespace cerebro::models
