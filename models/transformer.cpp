#include "models/transformer.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace cerebro::models {

torch::Tensor blocked_positions(int64_t tokens, int64_t context) {
  auto query = torch::arange(tokens, torch::kInt64).unsqueeze(1);
  auto key = torch::arange(tokens, torch::kInt64).unsqueeze(0);
  return key.gt(query).logical_or(query.sub(key).ge(context));
}

torch::Tensor multi_head_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   int64_t heads, const torch::Tensor& blocked) {
  const int64_t batch = q.size(0), queries = q.size(1), keys = k.size(1), d = q.size(2), head_width = d / heads;
  auto split = [&](const torch::Tensor& t, int64_t rows) {
    return t.reshape({batch, rows, heads, head_width}).transpose(1, 2);
  };
  auto scores = split(q, queries).matmul(split(k, keys).transpose(2, 3)) / std::sqrt(static_cast<double>(head_width));
  if (blocked.defined()) scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
  return scores.softmax(-1).matmul(split(v, keys)).transpose(1, 2).reshape({batch, queries, d});
}

namespace script {

std::string linear(const std::string& x, const std::string& name) {
  return fmt::format("torch.linear({1}, self.{0}_weight, self.{0}_bias)", name, x);
}

std::string layer_norm(const std::string& x, const std::string& name, int64_t width) {
  return fmt::format("torch.layer_norm({1}, [{2}], self.{0}_weight, self.{0}_bias, {3}, False)", name, x, width,
                     kNormEpsilon);
}

std::string attention(const std::string& q, const std::string& k, const std::string& v, int64_t heads, int64_t d_model,
                      const std::string& blocked, const std::string& out) {
  const int64_t head_width = d_model / heads;
  std::string src;
  for (const auto& [name, from] : {std::pair<std::string, std::string>{"aq", q}, {"ak", k}, {"av", v}})
    src += fmt::format("    {} = {}.reshape([{}.size(0), {}.size(1), {}, {}]).transpose(1, 2)\n", name, from, from,
                       from, heads, head_width);
  src += fmt::format("    s = torch.matmul(aq, ak.transpose(2, 3)) / {:.17g}\n",
                     std::sqrt(static_cast<double>(head_width)));
  if (!blocked.empty()) src += fmt::format("    s = s.masked_fill({}, float('-inf'))\n", blocked);
  src += fmt::format(
      "    {} = torch.matmul(torch.softmax(s, -1), av).transpose(1, 2).reshape([{}.size(0), {}.size(1), {}])\n", out, q,
      q, d_model);
  return src;
}

std::string self_attention(const std::string& block, int64_t heads, int64_t d_model, const std::string& blocked) {
  const int64_t d = d_model;
  std::string src = fmt::format("    qkv = {}\n", linear(layer_norm("h", block + "_norm1", d), block + "_qkv"));
  src += fmt::format("    q = qkv[:, :, 0:{0}]\n    k = qkv[:, :, {0}:{1}]\n    v = qkv[:, :, {1}:{2}]\n", d, 2 * d,
                     3 * d);
  src += attention("q", "k", "v", heads, d, blocked, "a");
  return src + fmt::format("    h = h + {}\n", linear("a", block + "_project"));
}

std::string feed_forward(const std::string& block, int64_t d_model) {
  const auto inner = linear(layer_norm("h", block + "_norm2", d_model), block + "_ff1");
  return fmt::format("    h = h + {}\n", linear(fmt::format("torch.gelu({})", inner), block + "_ff2"));
}

}  // namespace script

AttentionBlock AttentionBlock::registered(torch::nn::Module& owner, const std::string& name, int64_t d_model,
                                          int64_t ff) {
  using torch::nn::LayerNorm;
  using torch::nn::LayerNormOptions;
  using torch::nn::Linear;
  const int64_t d = d_model;
  AttentionBlock b;
  b.norm1 = owner.register_module(name + "_norm1", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
  b.qkv = owner.register_module(name + "_qkv", Linear(d, 3 * d));
  b.project = owner.register_module(name + "_project", Linear(d, d));
  b.norm2 = owner.register_module(name + "_norm2", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
  b.ff1 = owner.register_module(name + "_ff1", Linear(d, ff));
  b.ff2 = owner.register_module(name + "_ff2", Linear(ff, d));
  return b;
}

torch::Tensor AttentionBlock::attend(const torch::Tensor& x, int64_t heads, const torch::Tensor& blocked,
                                     const SeededDropout& drop, bool training) {
  const int64_t d = x.size(2);
  auto mixed = qkv->forward(norm1->forward(x));
  auto attended = multi_head_attention(mixed.slice(2, 0, d), mixed.slice(2, d, 2 * d), mixed.slice(2, 2 * d, 3 * d),
                                       heads, blocked);
  return x + drop(project->forward(attended), training);
}

torch::Tensor AttentionBlock::feed_forward(const torch::Tensor& x, const SeededDropout& drop, bool training) {
  return x + drop(ff2->forward(torch::gelu(ff1->forward(norm2->forward(x)))), training);
}

std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> AttentionBlock::parts(
    const std::string& name) const {
  return {{name + "_norm1", norm1.ptr()}, {name + "_qkv", qkv.ptr()}, {name + "_project", project.ptr()},
          {name + "_norm2", norm2.ptr()}, {name + "_ff1", ff1.ptr()}, {name + "_ff2", ff2.ptr()}};
}

TransformerImpl::TransformerImpl(const TransformerOptions& options) : dropout(options.dropout()), options_(options) {
  const auto d = options.d_model(), window = options.window();
  if (d % options.heads() != 0)
    throw Error(fmt::format("transformer: d_model {} is not a multiple of heads {}", d, options.heads()));
  if (options.context() == 0) options_.context(window);
  if (options_.context() > window)
    throw Error(fmt::format("transformer: context {} exceeds the data's window of {} tokens ([data] window)",
                            options_.context(), window));
  using torch::nn::Embedding;
  using torch::nn::LayerNorm;
  using torch::nn::LayerNormOptions;
  using torch::nn::Linear;
  tokens_ = register_module("tokens", Embedding(options.vocabulary(), d));
  positions_ = register_module("positions", Embedding(window, d));
  for (int64_t i = 0; i < options.layers(); ++i)
    blocks_.push_back(AttentionBlock::registered(*this, "block" + std::to_string(i), d, options.ff()));
  norm_ = register_module("norm", LayerNorm(LayerNormOptions({d}).eps(kNormEpsilon)));
  head_ = register_module("head", Linear(d, options.vocabulary()));
  // GPT-2's initialisation: small embeddings, so the first steps do not start from large logits.
  torch::NoGradGuard no_grad;
  tokens_->weight.normal_(0.0, 0.02);
  positions_->weight.normal_(0.0, 0.02);
}

torch::Tensor TransformerImpl::embed(torch::nn::Embedding tokens, torch::nn::Embedding positions, int64_t window,
                                     const torch::Tensor& x) {
  if (x.dim() != 2 || x.size(1) > window)
    throw Error(fmt::format("transformer: expects token ids shaped [batch, at most {}], got [{}]", window,
                            fmt::join(x.sizes(), ", ")));
  auto ids = x.to(torch::kInt64);
  return tokens->forward(ids) + positions->forward(torch::arange(ids.size(1), torch::kInt64));
}

torch::Tensor TransformerImpl::run_block(Block& b, const torch::Tensor& x, int64_t heads, int64_t context,
                                         const SeededDropout& drop, bool training) {
  return b.feed_forward(b.attend(x, heads, blocked_positions(x.size(1), context), drop, training), drop, training);
}

torch::Tensor TransformerImpl::forward(torch::Tensor x) {
  auto h = embed(tokens_, positions_, options_.window(), x);
  for (auto& b : blocks_) h = run_block(b, h, options_.heads(), options_.context(), dropout, is_training());
  return head_->forward(norm_->forward(h));
}

std::vector<ChainLink> TransformerImpl::chain() const {
  // One shared dropout for the links: set_generator on any link sets it.
  auto drop = std::make_shared<SeededDropout>(dropout);
  auto set_generator = [drop](const torch::Generator& g) { drop->set_generator(g); };
  std::vector<ChainLink> links;
  auto tokens = tokens_, positions = positions_;
  const auto window = options_.window();
  links.push_back(
      chain_link("embed", {{"tokens", tokens.ptr()}, {"positions", positions.ptr()}},
                 [tokens, positions, window](const torch::Tensor& x) { return embed(tokens, positions, window, x); }));
  const auto heads = options_.heads(), context = options_.context();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block b = blocks_[i];
    const auto n = "block" + std::to_string(i);
    links.push_back(chain_link(
        n, b.parts(n),
        [b, heads, context, drop](const torch::Tensor& x) mutable {
          return run_block(b, x, heads, context, *drop, b.qkv->is_training());
        },
        set_generator));
  }
  auto norm = norm_;
  auto head = head_;
  links.push_back(chain_link("head", {{"norm", norm.ptr()}, {"head", head.ptr()}},
                             [norm, head](const torch::Tensor& x) mutable { return head->forward(norm->forward(x)); }));
  return links;
}

Status TransformerImpl::export_torchscript(const std::string& path) {
  const auto d = options_.d_model();
  std::string src = "def forward(self, x):\n";
  src += "    ids = x.long()\n    t = ids.size(1)\n";
  src += "    h = torch.embedding(self.tokens_weight, ids) + torch.embedding(self.positions_weight, torch.arange(t))\n";
  src += "    query = torch.arange(t).unsqueeze(1)\n    key = torch.arange(t).unsqueeze(0)\n";
  src += fmt::format("    blocked = torch.logical_or(torch.gt(key, query), torch.ge(query - key, {}))\n",
                     options_.context());
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const auto n = "block" + std::to_string(i);
    src += script::self_attention(n, options_.heads(), d, "blocked");
    src += script::feed_forward(n, d);
  }
  src += fmt::format("    return {}\n", script::linear(script::layer_norm("h", "norm", d), "head"));
  return save_as_torchscript(*this, "CerebroTransformer", src, path);
}

void register_transformer_model() {
  register_builtin_model("transformer", [](ParamReader& r, const DataShape& shape) {
    auto options = TransformerOptions(shape.sample_shape.empty() ? 0 : shape.sample_shape.back(), shape.num_classes)
                       .layers(r.integer("layers", 2, 1))
                       .d_model(r.integer("d_model", 64, 1))
                       .heads(r.integer("heads", 4, 1))
                       .ff(r.integer("ff", 256, 1))
                       .dropout(r.fraction("dropout", 0.0))
                       .context(r.integer("context", 0, 1));
    if (shape.sample_shape.size() != 1)
      throw Error(
          fmt::format("transformer needs token windows shaped [window] (source = \"text\"); the data's "
                      "samples have shape [{}]",
                      fmt::join(shape.sample_shape, ", ")));
    Transformer m(options);
    return NativeModule{m.ptr(),
                        [m](const torch::Tensor& x) mutable { return m->forward(x); },
                        [m](const std::string& p) mutable { return m->export_torchscript(p); },
                        [m](const torch::Generator& g) mutable { m->dropout.set_generator(g); },
                        {},
                        {},
                        [m] { return m->chain(); }};
  });
}

}  // namespace cerebro::models
