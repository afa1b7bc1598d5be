#pragma once
// Next-token scores of a language model or a captioner trained with teacher forcing: over the target
// tokens (pad excluded), how many the model ranked first, and their summed negative log-likelihood in nats,
// from which perplexity = exp(mean). Counts and sums: shares add up to the whole.

#include <cstdint>

namespace cerebro::metrics {

struct TokenStats {
  int64_t tokens = 0;
  int64_t correct = 0;
  double negative_log_likelihood = 0.0;

  void add(int64_t target_tokens, int64_t ranked_first, double summed_nll) {
    tokens += target_tokens;
    correct += ranked_first;
    negative_log_likelihood += summed_nll;
  }
  void merge(const TokenStats& other) { add(other.tokens, other.correct, other.negative_log_likelihood); }
  // 0 without tokens.
  double accuracy() const;
  // exp(mean nll); infinity without tokens (nothing was predicted, so nothing is known).
  double perplexity() const;
};

}  // namespace cerebro::metrics
