#include "models/zoo.hpp"

#include <mutex>

#include <fmt/format.h>

#include "models/max_pool.hpp"
#include "models/captioner.hpp"
#include "models/detector.hpp"
#include "models/transformer.hpp"

namespace cerebro::models {

namespace {

std::string linear_call(const std::string& x, const std::string& name) {
  return fmt::format("torch.addmm(self.{0}_bias, {1}, self.{0}_weight.t())", name, x);
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

void require_image(const std::string& model, const DataShape& shape) {
  if (shape.sample_shape.size() != 3)
    throw Error(
        fmt::format("{} needs image samples shaped [channels, height, width]; the data's samples "
                    "have shape [{}]",
                    model, fmt::join(shape.sample_shape, ", ")));
}

}  // namespace

torch::Tensor SeededDropout::operator()(const torch::Tensor& x, bool training) const {
  if (!training || p_ <= 0) return x;
  auto keep = torch::full_like(x, 1.0 - p_);
  auto mask = torch::bernoulli(keep, generator_);
  return x * mask / (1.0 - p_);
}

// ---- mlp ------------------------------------------------------------------

MlpImpl::MlpImpl(const MlpOptions& options) : dropout(options.dropout()), options_(options) {
  int64_t in = options.in_features();
  auto sizes = options.hidden();
  sizes.push_back(options.num_classes());
  for (size_t i = 0; i < sizes.size(); ++i) {
    layers_.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(in, sizes[i])));
    in = sizes[i];
  }
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  x = x.flatten(1);
  for (size_t i = 0; i + 1 < layers_.size(); ++i) x = dropout(torch::relu(layers_[i]->forward(x)), is_training());
  return layers_.back()->forward(x);
}

Status MlpImpl::export_torchscript(const std::string& path) {
  std::string src = "def forward(self, x):\n    x = torch.flatten(x, 1)\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    auto call = linear_call("x", "fc" + std::to_string(i));
    src +=
        i + 1 < layers_.size() ? fmt::format("    x = torch.relu({})\n", call) : fmt::format("    return {}\n", call);
  }
  return save_as_torchscript(*this, "CerebroMlp", src, path);
}

std::vector<ChainLink> MlpImpl::chain() const {
  // One shared dropout for the links: set_generator on any link sets it.
  auto drop = std::make_shared<SeededDropout>(dropout);
  auto set_generator = [drop](const torch::Generator& g) { drop->set_generator(g); };
  std::vector<ChainLink> links;
  for (size_t i = 0; i < layers_.size(); ++i) {
    auto layer = layers_[i];
    const bool first = i == 0, last = i + 1 == layers_.size();
    auto name = "fc" + std::to_string(i);
    links.push_back(chain_link(
        name, {{name, layer.ptr()}},
        [layer, drop, first, last](const torch::Tensor& in) mutable {
          auto x = layer->forward(first ? in.flatten(1) : in);
          return last ? x : (*drop)(torch::relu(x), layer->is_training());
        },
        set_generator));
  }
  return links;
}

// ---- cnn ------------------------------------------------------------------

CnnImpl::CnnImpl(const CnnOptions& options) : dropout(options.dropout()), options_(options) {
  const auto& shape = options.sample_shape();
  int64_t in = shape[0], h = shape[1], w = shape[2];
  for (size_t i = 0; i < options.channels().size(); ++i) {
    auto out = options.channels()[i];
    convs_.push_back(register_module("conv" + std::to_string(i),
                                     torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 5).padding(2))));
    in = out;
    h /= 2;
    w /= 2;
    if (h < 1 || w < 1)
      throw Error(fmt::format("cnn: {} conv/pool stages shrink a {}x{} image to nothing; use fewer channels entries",
                              options.channels().size(), shape[1], shape[2]));
  }
  fc1_ = register_module("fc1", torch::nn::Linear(in * h * w, options.fc()));
  fc2_ = register_module("fc2", torch::nn::Linear(options.fc(), options.num_classes()));
}

torch::Tensor CnnImpl::forward(torch::Tensor x) {
  for (auto& conv : convs_) x = max_pool2x2(torch::relu(conv->forward(x)));
  x = dropout(torch::relu(fc1_->forward(x.flatten(1))), is_training());
  return fc2_->forward(x);
}

Status CnnImpl::export_torchscript(const std::string& path) {
  std::string src = "def forward(self, x):\n";
  for (size_t i = 0; i < convs_.size(); ++i)
    src += fmt::format(
        "    x = torch.max_pool2d(torch.relu(torch.conv2d(x, self.conv{0}_weight, self.conv{0}_bias, [1, 1], "
        "[2, 2], [1, 1], 1)), [2, 2], [2, 2], [0, 0], [1, 1], False)\n",
        i);
  src += fmt::format("    x = torch.relu({})\n", linear_call("torch.flatten(x, 1)", "fc1"));
  src += fmt::format("    return {}\n", linear_call("x", "fc2"));
  return save_as_torchscript(*this, "CerebroCnn", src, path);
}

std::vector<ChainLink> CnnImpl::chain() const {
  auto drop = std::make_shared<SeededDropout>(dropout);
  auto set_generator = [drop](const torch::Generator& g) { drop->set_generator(g); };
  std::vector<ChainLink> links;
  for (size_t i = 0; i < convs_.size(); ++i) {
    auto conv = convs_[i];
    auto name = "conv" + std::to_string(i);
    links.push_back(chain_link(name, {{name, conv.ptr()}}, [conv](const torch::Tensor& x) mutable {
      return max_pool2x2(torch::relu(conv->forward(x)));
    }));
  }
  auto fc1 = fc1_, fc2 = fc2_;
  links.push_back(chain_link(
      "fc1", {{"fc1", fc1.ptr()}},
      [fc1, drop](const torch::Tensor& x) mutable {
        return (*drop)(torch::relu(fc1->forward(x.flatten(1))), fc1->is_training());
      },
      set_generator));
  links.push_back(
      chain_link("fc2", {{"fc2", fc2.ptr()}}, [fc2](const torch::Tensor& x) mutable { return fc2->forward(x); }));
  return links;
}

// ---- resnet ---------------------------------------------------------------

ResNetImpl::ResNetImpl(const ResNetOptions& options) : options_(options) {
  using torch::nn::BatchNorm2d;
  using torch::nn::Conv2d;
  using torch::nn::Conv2dOptions;
  int64_t in = options.sample_shape()[0], width = options.width();
  stem_ = register_module("stem", Conv2d(Conv2dOptions(in, width, 3).padding(1).bias(false)));
  stem_bn_ = register_module("stem_bn", BatchNorm2d(width));
  in = width;
  int index = 0;
  for (size_t stage = 0; stage < options.blocks().size(); ++stage) {
    int64_t out = width << stage;
    for (int64_t b = 0; b < options.blocks()[stage]; ++b, ++index) {
      Block block;
      block.stride = (stage > 0 && b == 0) ? 2 : 1;
      auto name = "block" + std::to_string(index);
      block.conv1 = register_module(name + "_conv1",
                                    Conv2d(Conv2dOptions(in, out, 3).stride(block.stride).padding(1).bias(false)));
      block.bn1 = register_module(name + "_bn1", BatchNorm2d(out));
      block.conv2 = register_module(name + "_conv2", Conv2d(Conv2dOptions(out, out, 3).padding(1).bias(false)));
      block.bn2 = register_module(name + "_bn2", BatchNorm2d(out));
      if (block.stride != 1 || in != out) {
        block.project =
            register_module(name + "_project", Conv2d(Conv2dOptions(in, out, 1).stride(block.stride).bias(false)));
        block.project_bn = register_module(name + "_project_bn", BatchNorm2d(out));
      }
      blocks_.push_back(block);
      in = out;
    }
  }
  head_ = register_module("head", torch::nn::Linear(in, options.num_classes()));
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = torch::relu(stem_bn_->forward(stem_->forward(x)));
  for (auto& b : blocks_) {
    auto y = torch::relu(b.bn1->forward(b.conv1->forward(x)));
    y = b.bn2->forward(b.conv2->forward(y));
    auto skip = b.project ? b.project_bn->forward(b.project->forward(x)) : x;
    x = torch::relu(y + skip);
  }
  return head_->forward(x.mean({2, 3}));
}

std::vector<ChainLink> ResNetImpl::chain() const {
  std::vector<ChainLink> links;
  auto stem = stem_;
  auto stem_bn = stem_bn_;
  links.push_back(chain_link(
      "stem", {{"stem", stem.ptr()}, {"stem_bn", stem_bn.ptr()}},
      [stem, stem_bn](const torch::Tensor& x) mutable { return torch::relu(stem_bn->forward(stem->forward(x))); }));
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block b = blocks_[i];
    auto n = "block" + std::to_string(i);
    std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> parts = {{n + "_conv1", b.conv1.ptr()},
                                                                                     {n + "_bn1", b.bn1.ptr()},
                                                                                     {n + "_conv2", b.conv2.ptr()},
                                                                                     {n + "_bn2", b.bn2.ptr()}};
    if (b.project) {
      parts.emplace_back(n + "_project", b.project.ptr());
      parts.emplace_back(n + "_project_bn", b.project_bn.ptr());
    }
    links.push_back(chain_link(n, parts, [b](const torch::Tensor& x) mutable {
      auto y = torch::relu(b.bn1->forward(b.conv1->forward(x)));
      y = b.bn2->forward(b.conv2->forward(y));
      auto skip = b.project ? b.project_bn->forward(b.project->forward(x)) : x;
      return torch::relu(y + skip);
    }));
  }
  auto head = head_;
  links.push_back(chain_link("head", {{"head", head.ptr()}}, [head](const torch::Tensor& x) mutable {
    return head->forward(x.mean({2, 3}));
  }));
  return links;
}

Status ResNetImpl::export_torchscript(const std::string& path) {
  auto bn = [](const std::string& x, const std::string& n) {
    return fmt::format(
        "torch.batch_norm({1}, self.{0}_weight, self.{0}_bias, self.{0}_running_mean, "
        "self.{0}_running_var, False, 0.1, 1e-05, False)",
        n, x);
  };
  auto conv = [](const std::string& x, const std::string& n, int64_t stride, int64_t pad) {
    return fmt::format("torch.conv2d({1}, self.{0}_weight, None, [{2}, {2}], [{3}, {3}], [1, 1], 1)", n, x, stride,
                       pad);
  };
  std::string src = "def forward(self, x):\n";
  src += fmt::format("    x = torch.relu({})\n", bn(conv("x", "stem", 1, 1), "stem_bn"));
  for (size_t i = 0; i < blocks_.size(); ++i) {
    auto n = "block" + std::to_string(i);
    const auto& b = blocks_[i];
    src += fmt::format("    y = torch.relu({})\n", bn(conv("x", n + "_conv1", b.stride, 1), n + "_bn1"));
    src += fmt::format("    y = {}\n", bn(conv("y", n + "_conv2", 1, 1), n + "_bn2"));
    auto skip = b.project ? bn(conv("x", n + "_project", b.stride, 0), n + "_project_bn") : std::string("x");
    src += fmt::format("    x = torch.relu(y + {})\n", skip);
  }
  src += fmt::format("    return {}\n", linear_call("torch.mean(x, [2, 3])", "head"));
  return save_as_torchscript(*this, "CerebroResNet", src, path);
}

// ---- registration -----------------------------------------------------------

void register_zoo_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_builtin_model("mlp", [](ParamReader& r, const DataShape& shape) {
      auto options = MlpOptions(product(shape.sample_shape), shape.num_classes)
                         .hidden(r.int_list("hidden", {256, 128}, 1))
                         .dropout(r.fraction("dropout", 0.0));
      Mlp m(options);
      return NativeModule{m.ptr(),
                          [m](const torch::Tensor& x) mutable { return m->forward(x); },
                          [m](const std::string& p) mutable { return m->export_torchscript(p); },
                          [m](const torch::Generator& g) mutable { m->dropout.set_generator(g); },
                          {},
                          {},
                          [m] { return m->chain(); }};
    });
    register_builtin_model("cnn", [](ParamReader& r, const DataShape& shape) {
      auto channels = r.int_list("channels", {16, 32}, 1);
      auto fc = r.integer("fc", 128, 1);
      auto dropout = r.fraction("dropout", 0.0);
      require_image("cnn", shape);
      Cnn m(CnnOptions(shape.sample_shape, shape.num_classes).channels(channels).fc(fc).dropout(dropout));
      return NativeModule{m.ptr(),
                          [m](const torch::Tensor& x) mutable { return m->forward(x); },
                          [m](const std::string& p) mutable { return m->export_torchscript(p); },
                          [m](const torch::Generator& g) mutable { m->dropout.set_generator(g); },
                          {},
                          {},
                          [m] { return m->chain(); }};
    });
    register_builtin_model("resnet", [](ParamReader& r, const DataShape& shape) {
      auto width = r.integer("width", 16, 1);
      auto blocks = r.int_list("blocks", {1, 1}, 1);
      require_image("resnet", shape);
      ResNet m(ResNetOptions(shape.sample_shape, shape.num_classes).width(width).blocks(blocks));
      return NativeModule{m.ptr(),
                          [m](const torch::Tensor& x) mutable { return m->forward(x); },
                          [m](const std::string& p) mutable { return m->export_torchscript(p); },
                          {},
                          {},
                          {},
                          [m] { return m->chain(); }};
    });
    register_transformer_model();
    register_captioner_model();
    register_detector_model();
  });
}

}  // namespace cerebro::models
