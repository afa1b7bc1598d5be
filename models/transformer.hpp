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

// The parts of a pre-norm block that every attention model of the zoo has: causal self-attention and a
// GELU feed-forward layer, registered as <name>_norm1, _qkv, _project, _norm2, _ff1 and _ff2.
struct AttentionBlock {
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, project{nullptr}, ff1{nullptr}, ff2{nullptr};

  static AttentionBlock registered(torch::nn::Module& owner, const std::string& name, int64_t d_model, int64_t ff);
  // x + the dropped-out attention of norm1(x), masked by `blocked`.
  torch::Tensor attend(const torch::Tensor& x, int64_t heads, const torch::Tensor& blocked, const SeededDropout& drop,
                       bool training);
  // x + the dropped-out feed-forward layer of norm2(x).
  torch::Tensor feed_forward(const torch::Tensor& x, const SeededDropout& drop, bool training);
  // The parts by their names in the whole model (a chain link's, models/model.hpp chain_link).
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> parts(const std::string& name) const;
};

// TorchScript source for the exports of these models (models/model.hpp save_as_torchscript names the
// attributes `self.<module>_weight`).
namespace script {
std::string linear(const std::string& x, const std::string& name);
std::string layer_norm(const std::string& x, const std::string& name, int64_t width);
// Lines that set `out` to multi_head_attention of the variables q, k, v ([B, T, d_model] each), masked by
// the variable `blocked` unless it is empty.
std::string attention(const std::string& q, const std::string& k, const std::string& v, int64_t heads, int64_t d_model,
                      const std::string& blocked, const std::string& out);
// Lines that add the attention and then the feed-forward part of AttentionBlock `block` to the variable h.
std::string self_attention(const std::string& block, int64_t heads, int64_t d_model, const std::string& blocked);
std::string feed_forward(const std::string& block, int64_t d_model);
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
  using Block = AttentionBlock;
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
