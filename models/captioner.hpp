#pragma once
// The zoo's `captioner` (docs/TASKS.md "Models"): an image encoder whose feature map a Transformer
// decoder reads through cross-attention, batch first throughout.
//
//   input    [B, C*H*W + T]: the image's values, then T caption token ids (bos, the caption, eos, pad)
//            as floats (models/captions.hpp: what the captioning task feeds a model)
//   encoder  per entry of `channels` a stride-2 3x3 convolution, batch norm and relu (`encoder =
//            "resnet"` adds a residual block of two 3x3 convolutions after each), then a 1x1
//            convolution to d_model: the feature map's cells are the decoder's memory, each with a
//            learned position, layer-normed
//   decoder  token + position embeddings (max_length positions), then `layers` pre-norm blocks: causal
//            self-attention, cross-attention to the memory, a GELU feed-forward layer
//   head     norm, then a linear map to the vocabulary: [B, T, vocabulary] logits
//
// Every position's logits predict the next token, so the language model's next-token loss is the
// teacher-forced captioning loss, and greedy decoding runs the model on its own growing caption.

#include <vector>

#include "models/conv_stages.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"

namespace cerebro::models {

enum class CaptionEncoder { cnn, resnet };

struct CaptionerOptions {
  CaptionerOptions(std::vector<int64_t> image_shape, int64_t vocabulary)
      : image_shape_(std::move(image_shape)), vocabulary_(vocabulary) {}
  TORCH_ARG(std::vector<int64_t>, image_shape);  // {C, H, W}
  TORCH_ARG(int64_t, vocabulary);
  TORCH_ARG(CaptionEncoder, encoder) = CaptionEncoder::cnn;
  TORCH_ARG(std::vector<int64_t>, channels) = {32, 64};
  TORCH_ARG(int64_t, layers) = 2;
  TORCH_ARG(int64_t, d_model) = 64;
  TORCH_ARG(int64_t, heads) = 4;
  TORCH_ARG(int64_t, ff) = 256;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(int64_t, max_length) = 48;  // the longest token sequence: bos, caption, eos
};

class CaptionerImpl : public torch::nn::Module {
 public:
  // Throws cerebro::Error when d_model is not a multiple of heads or the image is too small for the encoder.
  explicit CaptionerImpl(const CaptionerOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);
  SeededDropout dropout;

 private:
  // A decoder block: the transformer's parts and, between them, a cross-attention to the memory.
  struct Block {
    AttentionBlock own;
    torch::nn::LayerNorm cross_norm{nullptr};
    torch::nn::Linear query{nullptr}, memory_kv{nullptr}, cross_project{nullptr};
  };
  torch::Tensor encode(const torch::Tensor& images);
  torch::Tensor run_block(Block& b, const torch::Tensor& x, const torch::Tensor& memory);

  CaptionerOptions options_;
  int64_t pixels_ = 0;
  ConvStages encoder_;
  torch::nn::Conv2d to_memory_{nullptr};
  torch::Tensor memory_positions_;
  torch::nn::LayerNorm memory_norm_{nullptr};
  torch::nn::Embedding tokens_{nullptr}, positions_{nullptr};
  std::vector<Block> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Captioner);

// Registers `captioner` with the zoo (register_zoo_models calls it).
void register_captioner_model();

}  // namespace cerebro::models
