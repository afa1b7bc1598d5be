#include "models/captions.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "datasets/tokenizer.hpp"
#include "models/task.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

namespace {

const datasets::RaggedField& caption_field(const datasets::Dataset& d) {
  const auto* field = d.field(datasets::kCaptionTokensField);
  if (!field || field->type != datasets::FieldType::int64)
    throw Error("captioning needs the prepared data's caption tokens (source = \"coco\" with a captions file)",
                StatusCode::failed_precondition);
  return *field;
}

// SplitMix64's finalizer: a well-mixed draw per (seed, example) that needs no generator state.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The ids of each row of `tokens` [n, t] after its bos, up to its first eos or pad.
std::vector<metrics::TokenIds> ids_after_bos(const torch::Tensor& tokens) {
  auto ids = tokens.to(torch::kInt64).contiguous();
  const int64_t n = ids.size(0);
  std::vector<metrics::TokenIds> captions(static_cast<size_t>(n));
  const auto* row = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i, row += ids.size(1)) {
    for (int64_t t = 1; t < ids.size(1); ++t) {
      if (row[t] == datasets::kEosToken || row[t] == datasets::kPadToken) break;
      captions[static_cast<size_t>(i)].push_back(row[t]);
    }
  }
  return captions;
}

}  // namespace

std::vector<metrics::TokenIds> captions_of(const datasets::Dataset& d, int64_t example) {
  const auto& field = caption_field(d);
  std::vector<metrics::TokenIds> captions(1);
  for (int64_t i = field.offsets[static_cast<size_t>(example)]; i < field.offsets[static_cast<size_t>(example) + 1];
       ++i) {
    const int64_t id = field.ints[static_cast<size_t>(i)];
    if (id == datasets::kEosToken) {
      captions.emplace_back();
    } else {
      captions.back().push_back(id);
    }
  }
  captions.pop_back();  // what followed the last eos: nothing
  return captions;
}

CaptionSet caption_set(const datasets::Dataset& d, int64_t rows) {
  caption_field(d);  // throws without captions, also for a set that has no examples left
  const int64_t n = rows < 0 ? d.size() : std::min(rows, d.size());
  CaptionSet set;
  set.captions.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    set.captions[static_cast<size_t>(i)] = captions_of(d, i);
    for (const auto& caption : set.captions[static_cast<size_t>(i)])
      set.longest = std::max<int64_t>(set.longest, static_cast<int64_t>(caption.size()));
  }
  return set;
}

torch::Tensor caption_targets(const datasets::Dataset& d, uint64_t seed) {
  const auto set = caption_set(d);
  const auto& all = set.captions;
  const int64_t n = static_cast<int64_t>(all.size());
  const int64_t positions = set.longest + 2;  // bos, the caption, eos
  auto targets = torch::zeros({n, positions}, torch::kFloat32);
  auto* row = targets.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i, row += positions) {
    const auto& captions = all[static_cast<size_t>(i)];
    if (captions.empty()) throw Error(fmt::format("example {} of the captioning set has no caption", i));
    const size_t drawn =
        seed == 0 ? 0 : static_cast<size_t>(mix(seed ^ mix(static_cast<uint64_t>(i))) % captions.size());
    const auto& caption = captions[drawn];
    row[0] = static_cast<float>(datasets::kBosToken);
    for (size_t t = 0; t < caption.size(); ++t) row[t + 1] = static_cast<float>(caption[t]);
    row[caption.size() + 1] = static_cast<float>(datasets::kEosToken);
  }
  return targets;
}

std::vector<metrics::TokenIds> greedy_captions(const Forward& forward, const torch::Tensor& images,
                                               int64_t max_tokens) {
  torch::NoGradGuard no_grad;
  const int64_t n = images.size(0);
  auto pixels = images.reshape({n, -1});
  auto tokens = torch::full({n, 1}, static_cast<float>(datasets::kBosToken), torch::kFloat32);
  auto finished = torch::zeros({n}, torch::kBool);
  for (int64_t step = 0; step < max_tokens; ++step) {
    auto logits = forward(torch::cat({pixels, tokens}, 1));
    auto next = logits.select(1, logits.size(1) - 1).argmax(-1);
    // A finished caption goes on with pad, which the model never has to read as a real token.
    next = next.masked_fill(finished, datasets::kPadToken);
    finished = finished.logical_or(next.eq(datasets::kEosToken)).logical_or(next.eq(datasets::kPadToken));
    tokens = torch::cat({tokens, next.to(torch::kFloat32).unsqueeze(1)}, 1);
    if (finished.all().item<bool>()) break;
  }
  return ids_after_bos(tokens);
}

std::vector<metrics::TokenIds> beam_captions(const Forward& forward, const torch::Tensor& images, int64_t max_tokens,
                                             int64_t beam) {
  if (beam <= 1) return greedy_captions(forward, images, max_tokens);
  torch::NoGradGuard no_grad;
  const int64_t n = images.size(0);
  // Row b * beam + k is hypothesis k of image b.
  auto pixels = images.reshape({n, -1}).repeat_interleave(beam, 0);
  auto tokens = torch::full({n * beam, 1}, static_cast<float>(datasets::kBosToken), torch::kFloat32);
  auto finished = torch::zeros({n * beam}, torch::kBool);
  // Every hypothesis starts as the same bos: only the first may grow at the first step, or the beam would
  // hold `beam` copies of one caption.
  auto scores = torch::full({n, beam}, -std::numeric_limits<float>::infinity());
  scores.select(1, 0).fill_(0);
  const auto base = torch::arange(n, torch::kInt64).mul(beam).unsqueeze(1);
  for (int64_t step = 0; step < max_tokens; ++step) {
    auto logits = forward(torch::cat({pixels, tokens}, 1));
    auto log_p = torch::log_softmax(logits.select(1, logits.size(1) - 1).to(torch::kFloat32), -1);
    const int64_t vocabulary = log_p.size(1);
    // An ended hypothesis goes on with pad alone, at no cost: it competes with its score as it ended.
    auto ended = torch::full({vocabulary}, -std::numeric_limits<float>::infinity());
    ended[datasets::kPadToken] = 0;
    log_p = torch::where(finished.unsqueeze(1), ended.unsqueeze(0), log_p);
    auto candidates = (scores.unsqueeze(2) + log_p.reshape({n, beam, vocabulary})).reshape({n, beam * vocabulary});
    auto [best, index] = candidates.topk(beam, 1);
    auto source = (base + index.div(vocabulary, "floor")).reshape({-1});
    auto next = index.remainder(vocabulary).reshape({-1});
    scores = best;
    finished = finished.index_select(0, source)
                   .logical_or(next.eq(datasets::kEosToken))
                   .logical_or(next.eq(datasets::kPadToken));
    tokens = torch::cat({tokens.index_select(0, source), next.to(torch::kFloat32).unsqueeze(1)}, 1);
    if (finished.all().item<bool>()) break;
  }
  // topk sorts: hypothesis 0 of each image is its best.
  return ids_after_bos(tokens.reshape({n, beam, -1}).select(1, 0));
}

metrics::BleuStats caption_bleu(Model& model, const datasets::Dataset& d, int64_t batch, int64_t beam) {
  metrics::BleuStats stats;
  const auto set = caption_set(d);
  const auto& references = set.captions;
  auto images = detail::features_of(d);
  for (int64_t begin = 0; begin < d.size(); begin += batch) {
    const int64_t end = std::min(begin + batch, d.size());
    auto hypotheses = beam_captions([&](const torch::Tensor& x) { return model.forward(x); },
                                    images.slice(0, begin, end), set.longest + 1, beam);
    for (int64_t i = begin; i < end; ++i)
      stats.add(hypotheses[static_cast<size_t>(i - begin)], references[static_cast<size_t>(i)]);
  }
  return stats;
}

}  // namespace cerebro::models
