#pragma once
// The zoo's `transformer` (docs/TASKS.md "Models"): a decoder-only language model, batch first
// throughout so that its blocks split into pipeline stages as the other zoo models do.
//
//   input   [B, T] token ids (the features of a text source, as floats)
//   embed   token embedding + learned position embedding (T rows: the data's window)
//   blocks  `layers` pre-norm blocks: x + attention(norm(x)), then x + ff(norm(x)); the attention is
//           causal and attends to at most `context` tokens (itself and the context - 1 before it)
//   head    norm, then a linear map to the vocabulary: [B, T, vocabulary] logits
//
// Written on Linear and LayerNorm rather than LibTorch's sequence-first TransformerDecoder, so
// each block is one chain link over [B, T, d_model] and the export is the same arithmetic.

#include <vector>

#include "models/zoo.hpp"

namespace cerebro::models {

inline constexpr double kNormEpsilon = 1e-5;  // every LayerNorm of the zoo's attention models

// Where a query (row) may not look: later tokens, and those `context` or more before it.
torch::Tensor blocked_positions(int64_t tokens, int64_t context);

// Multi-head scaled dot-product attention of queries [B, Tq, d] over keys and values [B, Tk, d] (already
// projected); `blocked` (bool [Tq, Tk], or undefined: none) marks what a query may not attend to.
torch::Tensor multi_head_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   int64_t heads, const torch::Tensor& blocked);

// TorchScript source for the exports of these models (models/model.hpp save_as_torchscript names the
// attributes `self.<module>_weight`).
namespace script {
std::string linear(const std::string& x, const std::string& name);
std::string layer_norm(const std::string& x, const std::string& name, int64_t width);
// Lines that set `out` to multi_head_attention of the variables q, k, v ([B, T, d_model] each), masked by
// the variable `blocked` unless it is empty.
std::string attention(const std::string& q, const std::string& k, const std::string& v, int64_t heads, int64_t d_model,
                      const std::string& blocked, const std::string& out);
// x's feed-forward branch: linear `block`_ff2 of gelu of linear `block`_ff1 of layer norm `norm` of x.
std::string feed_forward(const std::string& x, const std::string& block, const std::string& norm, int64_t width);
}  // namespace script

struct TransformerOptions {
  TransformerOptions(int64_t window, int64_t vocabulary) : window_(window), vocabulary_(vocabulary) {}
  TORCH_ARG(int64_t, window);      // the data's tokens per example
  TORCH_ARG(int64_t, vocabulary);  // the tokenizer's ids
  TORCH_ARG(int64_t, layers) = 2;
  TORCH_ARG(int64_t, d_model) = 64;
  TORCH_ARG(int64_t, heads) = 4;
  TORCH_ARG(int64_t, ff) = 256;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(int64_t, context) = 0;  // 0: the window
};

class TransformerImpl : public torch::nn::Module {
 public:
  // Throws cerebro::Error when d_model is not a multiple of heads or context exceeds the window.
  explicit TransformerImpl(const TransformerOptions& options);
  torch::Tensor forward(torch::Tensor x);
  Status export_torchscript(const std::string& path);
  std::vector<ChainLink> chain() const;
  SeededDropout dropout;

 private:
  struct Block {
    torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
    torch::nn::Linear qkv{nullptr}, project{nullptr}, ff1{nullptr}, ff2{nullptr};
  };
  static torch::Tensor run_block(Block& b, const torch::Tensor& x, int64_t heads, int64_t context,
                                 const SeededDropout& drop, bool training);
  static torch::Tensor embed(torch::nn::Embedding tokens, torch::nn::Embedding positions, int64_t window,
                             const torch::Tensor& x);

  TransformerOptions options_;
  torch::nn::Embedding tokens_{nullptr}, positions_{nullptr};
  std::vector<Block> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Transformer);

// Registers `transformer` with the zoo (register_zoo_models calls it).
void register_transformer_model();

}  // namespace cerebro::models
