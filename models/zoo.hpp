#pragma once
// The built-in model zoo, in the style of torch::nn: an options struct with
// chained setters and a TORCH_MODULE holder per model.

#include <vector>

#include "models/model.hpp"

namespace cerebro::models {

// Per-unit dropout that draws from a generator the worker sets, so results do
// not depend on what other threads draw from the global generator.
class SeededDropout {
 public:
  explicit SeededDropout(double p = 0.0) : p_(p) {}
  torch::Tensor operator()(const torch::Tensor& x, bool training) const;
  void set_generator(const torch::Generator& g) { generator_ = g; }
  double p() const { return p_; }

 private:
  double p_;
  c10::optional<torch::Generator> generator_;
};

struct MlpOptions {
  MlpOptions(int64_t in_features, int64_t num_classes) : in_features_(in_features), num_classes_(num_classes) {}
  TORCH_ARG(int64_t, in_features);
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(std::vector<int64_t>, hidden) = {256, 128};
  TORCH_ARG(double, dropout) = 0.0;
};

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const MlpOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);
  // forward as a chain of links (pipeline stages, models/pipeline.hpp) that
  // hold no reference to this module: the same computation, link by link.
  std::vector<ChainLink> chain() const;
  SeededDropout dropout;

 private:
  MlpOptions options_;
  std::vector<torch::nn::Linear> layers_;
};
TORCH_MODULE(Mlp);

struct CnnOptions {
  CnnOptions(std::vector<int64_t> sample_shape, int64_t num_classes)
      : sample_shape_(std::move(sample_shape)), num_classes_(num_classes) {}
  TORCH_ARG(std::vector<int64_t>, sample_shape);  // {C, H, W}
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(std::vector<int64_t>, channels) = {16, 32};
  TORCH_ARG(int64_t, fc) = 128;
  TORCH_ARG(double, dropout) = 0.0;
};

// conv5x5(pad 2) -> relu -> maxpool2 per entry of `channels`, then fc -> relu -> fc.
class CnnImpl : public torch::nn::Module {
 public:
  explicit CnnImpl(const CnnOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);
  // forward as a chain of links (pipeline stages, models/pipeline.hpp) that
  // hold no reference to this module: the same computation, link by link.
  std::vector<ChainLink> chain() const;
  SeededDropout dropout;

 private:
  CnnOptions options_;
  std::vector<torch::nn::Conv2d> convs_;
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(Cnn);

struct ResNetOptions {
  ResNetOptions(std::vector<int64_t> sample_shape, int64_t num_classes)
      : sample_shape_(std::move(sample_shape)), num_classes_(num_classes) {}
  TORCH_ARG(std::vector<int64_t>, sample_shape);  // {C, H, W}
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(int64_t, width) = 16;                    // channels of the first stage
  TORCH_ARG(std::vector<int64_t>, blocks) = {1, 1};  // basic blocks per stage; width doubles per stage
};

// A small residual net: conv3x3-bn-relu stem, stages of basic blocks (stride 2
// between stages, 1x1 projection on the skip), global average pool, linear.
class ResNetImpl : public torch::nn::Module {
 public:
  explicit ResNetImpl(const ResNetOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);
  // forward as a chain of links (pipeline stages, models/pipeline.hpp) that
  // hold no reference to this module: the same computation, link by link.
  std::vector<ChainLink> chain() const;

 private:
  struct Block {
    torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, project{nullptr};
    torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, project_bn{nullptr};
    int64_t stride = 1;
  };
  ResNetOptions options_;
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<Block> blocks_;
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(ResNet);

// Registers mlp, cnn, resnet, transformer (models/transformer.hpp), captioner
// (models/captioner.hpp) and detector (models/detector.hpp). Idempotent;
// called by build_model.
void register_zoo_models();

// Registers a zoo model. Models registered with register_model take
// precedence over zoo models of the same name, whichever is registered first.
void register_builtin_model(const std::string& name, ModuleFactory factory);

}  // namespace cerebro::models
