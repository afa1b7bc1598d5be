#include "models/detector.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cerebro::models {

DetectorImpl::DetectorImpl(const DetectorOptions& options) : options_(options) {
  const auto& image = options.image_shape();
  if (image.size() != 3) throw Error("detector: the image shape must be {channels, height, width}");
  backbone_ = ConvStages(*this, image[0], options.channels(), true);
  using torch::nn::Conv2d;
  using torch::nn::Conv2dOptions;
  head_conv_ =
      register_module("head_conv", Conv2d(Conv2dOptions(backbone_.out_channels(), options.head(), 3).padding(1)));
  head_out_ = register_module("head_out", Conv2d(Conv2dOptions(options.head(), options.classes() + 4, 1)));
  torch::NoGradGuard no_grad;
  head_out_->bias.slice(0, 0, options.classes()).fill_(std::log(0.1 / 0.9));
}

torch::Tensor DetectorImpl::forward(torch::Tensor x) {
  const auto& image = options_.image_shape();
  if (x.dim() != 4 || x.size(1) != image[0] || x.size(2) != image[1] || x.size(3) != image[2])
    throw Error(fmt::format("detector: expects images shaped [batch, {}], got [{}]", fmt::join(image, ", "),
                            fmt::join(x.sizes(), ", ")));
  return head_out_->forward(torch::relu(head_conv_->forward(backbone_.forward(x))));
}

Status DetectorImpl::export_torchscript(const std::string& path) {
  std::string src = "def forward(self, x):\n    y = x\n";
  src += backbone_.script("y");
  src += "    y = torch.relu(torch.conv2d(y, self.head_conv_weight, self.head_conv_bias, [1, 1], [1, 1]))\n";
  src += "    return torch.conv2d(y, self.head_out_weight, self.head_out_bias)\n";
  return save_as_torchscript(*this, "CerebroDetector", src, path);
}

void register_detector_model() {
  register_builtin_model("detector", [](ParamReader& r, const DataShape& shape) {
    auto options = DetectorOptions(shape.sample_shape, shape.num_classes)
                       .channels(r.int_list("channels", {32, 64}, 1))
                       .head(r.integer("head", 64, 1));
    if (shape.sample_shape.size() != 3)
      throw Error(fmt::format(
          "detector needs images with boxes (source = \"coco\", task = \"detection\"); the data's samples have "
          "shape [{}]",
          fmt::join(shape.sample_shape, ", ")));
    Detector m(options);
    return NativeModule{m.ptr(), [m](const torch::Tensor& x) mutable { return m->forward(x); },
                        [m](const std::string& p) mutable { return m->export_torchscript(p); }};
  });
}

}  // namespace cerebro::models
