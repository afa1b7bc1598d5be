#pragma once
// What the captioning task feeds a model (docs/TASKS.md "Captioning"). A model sees an image and a
// caption as one row of floats: the image's C*H*W values, then T token ids: bos, the caption's ids and its
// eos, pad (0) after a shorter caption, with T = 1 + the longest caption (eos included) of the set. The
// row's target is its T ids, so the language model's next-token loss is the teacher-forced captioning
// loss. One row per image: a training unit draws one of an image's captions from its seed (each epoch's
// units have their own seeds, so an image shows its captions in turn), a validation takes each image's
// first. Templates get the same rows.
//
// Inside models/ only (it includes LibTorch).

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "datasets/dataset.hpp"
#include "models/model.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/metrics/bleu.hpp"

namespace cerebro::models {

// The captions of example `example` of a prepared captioning set (its int64 field `captions`): each
// caption's ids, without its eos. Throws cerebro::Error when the set has no captions.
std::vector<metrics::TokenIds> captions_of(const datasets::Dataset& d, int64_t example);

// The captions of the first `rows` examples of `d` (all: -1), and the longest one's length.
struct CaptionSet {
  std::vector<std::vector<metrics::TokenIds>> captions;  // per example, as captions_of
  int64_t longest = 0;
};
CaptionSet caption_set(const datasets::Dataset& d, int64_t rows = -1);

// The targets a pass over `d` trains on: float [n, T] as above; `seed` 0 takes every image's first caption.
torch::Tensor caption_targets(const datasets::Dataset& d, uint64_t seed);

// A model's forward: a zoo or template model's, or an exported one's (models/predict.hpp).
using Forward = std::function<torch::Tensor(const torch::Tensor&)>;

// The greedy captions of `images` [B, C, H, W] by `forward`: from bos, each step appends the most likely
// next token, until eos (left out) or `max_tokens` tokens.
std::vector<metrics::TokenIds> greedy_captions(const Forward& forward, const torch::Tensor& images, int64_t max_tokens);

// The captions of `images` by beam search over `beam` hypotheses per image (1: greedy_captions): each step
// extends every live hypothesis by every token and keeps the `beam` of the highest summed log-probability;
// a hypothesis ends at eos (or pad) and keeps its score. Each image's caption is its best hypothesis after
// every one has ended or `max_tokens` steps, without length normalisation (as Show and Tell's decoder).
std::vector<metrics::TokenIds> beam_captions(const Forward& forward, const torch::Tensor& images, int64_t max_tokens,
                                             int64_t beam);

// Corpus BLEU statistics of the captions (beam_captions with `beam`) of every image of `d`, `batch` images
// at a time, against all its captions; the captions may be as long as the longest one of `d`.
metrics::BleuStats caption_bleu(Model& model, const datasets::Dataset& d, int64_t batch, int64_t beam);

}  // namespace cerebro::models
