#include "residual_mlp.hpp"

#include "models/model.hpp"

namespace {

// input -> width, one residual block, -> classes.
struct ResidualMlpImpl : torch::nn::Module {
  ResidualMlpImpl(int64_t in, int64_t width, int64_t classes)
      : input(register_module("input", torch::nn::Linear(in, width))),
        block(register_module("block", torch::nn::Linear(width, width))),
        head(register_module("head", torch::nn::Linear(width, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(input->forward(x.flatten(1)));
    x = x + torch::relu(block->forward(x));
    return head->forward(x);
  }

  torch::nn::Linear input, block, head;
};
TORCH_MODULE(ResidualMlp);

// The same forward in TorchScript, over the copied weights (input.weight ->
// self.input_weight), so the best model loads in plain LibTorch.
const char* const kScriptForward = R"(def forward(self, x):
    x = torch.relu(torch.addmm(self.input_bias, torch.flatten(x, 1), self.input_weight.t()))
    x = x + torch.relu(torch.addmm(self.block_bias, x, self.block_weight.t()))
    return torch.addmm(self.head_bias, x, self.head_weight.t())
)";

}  // namespace

void register_residual_mlp() {
  cerebro::models::register_model(
      "residual_mlp", [](cerebro::models::ParamReader& params, const cerebro::models::DataShape& shape) {
        int64_t in = 1;
        for (auto size : shape.sample_shape) in *= size;
        ResidualMlp net(in, params.integer("width", 32, 1), shape.num_classes);
        return cerebro::models::NativeModule{
            net.ptr(), [net](const torch::Tensor& x) mutable { return net->forward(x); },
            [net](const std::string& path) mutable {
              return cerebro::models::save_as_torchscript(*net, "ResidualMlp", kScriptForward, path);
            }};
      });
}
