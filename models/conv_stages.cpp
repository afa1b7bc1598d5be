#include "models/conv_stages.hpp"

#include <fmt/format.h>

namespace cerebro::models {

namespace {

using torch::nn::BatchNorm2d;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

// Without bias: a batch norm follows it.
Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return Conv2d(Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

std::string batch_norm_script(const std::string& x, const std::string& name) {
  return fmt::format(
      "torch.batch_norm({1}, self.{0}_weight, self.{0}_bias, self.{0}_running_mean, self.{0}_running_var, False, "
      "0.1, 1e-05, False)",
      name, x);
}

std::string conv_script(const std::string& x, const std::string& name, int64_t stride) {
  return fmt::format("torch.conv2d({1}, self.{0}_weight, None, [{2}, {2}], [1, 1])", name, x, stride);
}

}  // namespace

ConvStages::ConvStages(torch::nn::Module& owner, int64_t in_channels, const std::vector<int64_t>& channels,
                       bool residual)
    : out_channels_(in_channels) {
  for (size_t i = 0; i < channels.size(); ++i) {
    const auto n = "stage" + std::to_string(i);
    const int64_t out = channels[i];
    Stage s;
    s.conv = owner.register_module(n + "_conv", conv3x3(out_channels_, out, 2));
    s.norm = owner.register_module(n + "_norm", BatchNorm2d(out));
    if (residual) {
      s.residual1 = owner.register_module(n + "_residual1", conv3x3(out, out, 1));
      s.residual_norm1 = owner.register_module(n + "_residual_norm1", BatchNorm2d(out));
      s.residual2 = owner.register_module(n + "_residual2", conv3x3(out, out, 1));
      s.residual_norm2 = owner.register_module(n + "_residual_norm2", BatchNorm2d(out));
    }
    stages_.push_back(s);
    out_channels_ = out;
  }
}

torch::Tensor ConvStages::forward(torch::Tensor y) const {
  for (Stage s : stages_) {  // a copy shares the modules; their forward is not const
    y = torch::relu(s.norm->forward(s.conv->forward(y)));
    if (s.residual1) {
      auto r = torch::relu(s.residual_norm1->forward(s.residual1->forward(y)));
      y = torch::relu(y + s.residual_norm2->forward(s.residual2->forward(r)));
    }
  }
  return y;
}

std::string ConvStages::script(const std::string& x) const {
  std::string src;
  for (size_t i = 0; i < stages_.size(); ++i) {
    const auto n = "stage" + std::to_string(i);
    src +=
        fmt::format("    {0} = torch.relu({1})\n", x, batch_norm_script(conv_script(x, n + "_conv", 2), n + "_norm"));
    if (stages_[i].residual1) {
      src += fmt::format("    r = torch.relu({})\n",
                         batch_norm_script(conv_script(x, n + "_residual1", 1), n + "_residual_norm1"));
      src += fmt::format("    {0} = torch.relu({0} + {1})\n", x,
                         batch_norm_script(conv_script("r", n + "_residual2", 1), n + "_residual_norm2"));
    }
  }
  return src;
}

int64_t ConvStages::reduced(int64_t side) const {
  for (size_t i = 0; i < stages_.size(); ++i) side = (side + 1) / 2;
  return side;
}

}  // namespace cerebro::models
