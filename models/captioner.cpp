#include "models/captioner.hpp"

#include <array>

#include <fmt/format.h>

#include "runtime/base/enum_names.hpp"

#include "models/transformer.hpp"

namespace cerebro::models {

namespace {

constexpr std::array<EnumName<CaptionEncoder>, 2> kCaptionEncoderNames = {
    {{CaptionEncoder::cnn, "cnn"}, {CaptionEncoder::resnet, "resnet"}}};

}  // namespace

using torch::nn::LayerNorm;
using torch::nn::LayerNormOptions;
using torch::nn::Linear;

CaptionerImpl::CaptionerImpl(const CaptionerOptions& options) : dropout(options.dropout()), options_(options) {
  const auto& image = options.image_shape();
  const auto d = options.d_model();
  if (image.size() != 3) throw Error("captioner: the image shape must be {channels, height, width}");
  if (d % options.heads() != 0)
    throw Error(fmt::format("captioner: d_model {} is not a multiple of heads {}", d, options.heads()));
  pixels_ = image[0] * image[1] * image[2];
  encoder_ = ConvStages(*this, image[0], options.channels(), options.encoder() == CaptionEncoder::resnet);
  const int64_t cells = encoder_.reduced(image[1]) * encoder_.reduced(image[2]);
  to_memory_ = register_module("to_memory", torch::nn::Conv2d(torch::nn::Conv2dOptions(encoder_.out_channels(), d, 1)));
  memory_positions_ = register_parameter("memory_positions", torch::zeros({cells, d}));
  memory_norm_ = register_module("memory_norm", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
  tokens_ = register_module("tokens", torch::nn::Embedding(options.vocabulary(), d));
  positions_ = register_module("positions", torch::nn::Embedding(options.max_length(), d));
  for (int64_t i = 0; i < options.layers(); ++i) {
    const auto n = "block" + std::to_string(i);
    Block b;
    b.own = AttentionBlock::registered(*this, n, d, options.ff());
    b.cross_norm = register_module(n + "_cross_norm", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
    b.query = register_module(n + "_query", Linear(d, d));
    b.memory_kv = register_module(n + "_memory_kv", Linear(d, 2 * d));
    b.cross_project = register_module(n + "_cross_project", Linear(d, d));
    blocks_.push_back(b);
  }
  norm_ = register_module("norm", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
  head_ = register_module("head", Linear(d, options.vocabulary()));
  // Small embeddings, as the transformer starts (GPT-2's initialisation).
  torch::NoGradGuard no_grad;
  tokens_->weight.normal_(0.0, 0.02);
  positions_->weight.normal_(0.0, 0.02);
  memory_positions_.normal_(0.0, 0.02);
}

torch::Tensor CaptionerImpl::encode(const torch::Tensor& images) {
  auto y = encoder_.forward(images);
  auto memory = to_memory_->forward(y).flatten(2).transpose(1, 2);
  return memory_norm_->forward(memory + memory_positions_);
}

torch::Tensor CaptionerImpl::run_block(Block& b, const torch::Tensor& x, const torch::Tensor& memory) {
  const int64_t d = x.size(2), heads = options_.heads();
  const bool training = is_training();
  auto h = b.own.attend(x, heads, blocked_positions(x.size(1), x.size(1)), dropout, training);
  auto kv = b.memory_kv->forward(memory);
  auto read = multi_head_attention(b.query->forward(b.cross_norm->forward(h)), kv.slice(2, 0, d), kv.slice(2, d, 2 * d),
                                   heads, torch::Tensor());
  h = h + dropout(b.cross_project->forward(read), training);
  return b.own.feed_forward(h, dropout, training);
}

torch::Tensor CaptionerImpl::forward(torch::Tensor x) {
  const auto& image = options_.image_shape();
  if (x.dim() != 2 || x.size(1) <= pixels_)
    throw Error(fmt::format(
        "captioner: expects rows of an image's {} values and then caption tokens ([batch, {} + tokens]), got [{}]",
        pixels_, pixels_, fmt::join(x.sizes(), ", ")));
  const int64_t tokens = x.size(1) - pixels_;
  if (tokens > options_.max_length())
    throw Error(fmt::format("captioner: {} caption tokens (bos, the longest caption and its eos) exceed max_length {}",
                            tokens, options_.max_length()));
  auto memory = encode(x.slice(1, 0, pixels_).reshape({x.size(0), image[0], image[1], image[2]}));
  auto ids = x.slice(1, pixels_).to(torch::kInt64);
  auto h = tokens_->forward(ids) + positions_->forward(torch::arange(tokens, torch::kInt64));
  for (auto& b : blocks_) h = run_block(b, h, memory);
  return head_->forward(norm_->forward(h));
}

Status CaptionerImpl::export_torchscript(const std::string& path) {
  const auto& image = options_.image_shape();
  const auto d = options_.d_model();
  std::string src = "def forward(self, x):\n";
  src += fmt::format("    y = x[:, 0:{}].reshape([x.size(0), {}, {}, {}])\n", pixels_, image[0], image[1], image[2]);
  src += encoder_.script("y");
  src += "    m = torch.conv2d(y, self.to_memory_weight, self.to_memory_bias).flatten(2).transpose(1, 2)\n";
  src += fmt::format("    m = {}\n", script::layer_norm("m + self.memory_positions", "memory_norm", d));
  src += fmt::format("    ids = x[:, {}:].long()\n    t = ids.size(1)\n", pixels_);
  src += "    h = torch.embedding(self.tokens_weight, ids) + torch.embedding(self.positions_weight, torch.arange(t))\n";
  src += "    blocked = torch.gt(torch.arange(t).unsqueeze(0), torch.arange(t).unsqueeze(1))\n";
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const auto n = "block" + std::to_string(i);
    src += script::self_attention(n, options_.heads(), d, "blocked");
    src += fmt::format("    q = {}\n", script::linear(script::layer_norm("h", n + "_cross_norm", d), n + "_query"));
    src += fmt::format("    kv = {}\n", script::linear("m", n + "_memory_kv"));
    src += fmt::format("    k = kv[:, :, 0:{0}]\n    v = kv[:, :, {0}:{1}]\n", d, 2 * d);
    src += script::attention("q", "k", "v", options_.heads(), d, "", "a");
    src += fmt::format("    h = h + {}\n", script::linear("a", n + "_cross_project"));
    src += script::feed_forward(n, d);
  }
  src += fmt::format("    return {}\n", script::linear(script::layer_norm("h", "norm", d), "head"));
  return save_as_torchscript(*this, "CerebroCaptioner", src, path);
}

void register_captioner_model() {
  register_builtin_model("captioner", [](ParamReader& r, const DataShape& shape) {
    const auto encoder_name = r.string("encoder", "cnn");
    const auto encoder = enum_named<CaptionEncoder>(kCaptionEncoderNames, encoder_name);
    if (!encoder)
      throw ParamError(fmt::format("captioner: encoder must be {}, got \"{}\"", enum_alternatives(kCaptionEncoderNames),
                                   encoder_name));
    auto options = CaptionerOptions(shape.sample_shape, shape.num_classes)
                       .encoder(*encoder)
                       .channels(r.int_list("channels", {32, 64}, 1))
                       .layers(r.integer("layers", 2, 1))
                       .d_model(r.integer("d_model", 64, 1))
                       .heads(r.integer("heads", 4, 1))
                       .ff(r.integer("ff", 256, 1))
                       .dropout(r.fraction("dropout", 0.0))
                       .max_length(r.integer("max_length", 48, 2));
    if (shape.sample_shape.size() != 3)
      throw Error(fmt::format(
          "captioner needs images with captions (source = \"coco\", task = \"captioning\"); the data's samples "
          "have shape [{}]",
          fmt::join(shape.sample_shape, ", ")));
    Captioner m(options);
    return NativeModule{m.ptr(),
                        [m](const torch::Tensor& x) mutable { return m->forward(x); },
                        [m](const std::string& p) mutable { return m->export_torchscript(p); },
                        [m](const torch::Generator& g) mutable { m->dropout.set_generator(g); },
                        {},
                        {},
                        {}};
  });
}

}  // namespace cerebro::models
