#pragma once
// Corpus BLEU-4 (Papineni et al. 2002) as NLTK's corpus_bleu computes it without smoothing: n-gram
// precisions 1..4 clipped by the most any one reference holds, summed over the corpus before they are
// divided; the brevity penalty from the summed hypothesis length against the summed length of each
// hypothesis' closest reference (the shorter on a tie); equal weights. A corpus with no matching n-gram of
// some order scores 0 (NLTK prints a warning and returns a number below 1e-70 there).
//
// The statistics are counts, so a validation set scored in shares adds up to the whole set's score.

#include <array>
#include <cstdint>
#include <vector>

namespace cerebro::metrics {

using TokenIds = std::vector<int64_t>;

struct BleuStats {
  std::array<int64_t, 4> matched{};  // clipped n-gram matches, n = 1..4
  std::array<int64_t, 4> total{};    // the hypotheses' n-grams
  int64_t hypothesis_length = 0;
  int64_t reference_length = 0;  // each hypothesis' closest reference length, summed
  int64_t sentences = 0;

  // One hypothesis against its references (at least one; an empty list adds nothing).
  void add(const TokenIds& hypothesis, const std::vector<TokenIds>& references);
  void merge(const BleuStats& other);
  // In [0, 1]; 0 for an empty corpus.
  double bleu4() const;
};

}  // namespace cerebro::metrics
