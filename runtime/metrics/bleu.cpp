#include "runtime/metrics/bleu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace cerebro::metrics {

namespace {

using NgramCounts = std::map<TokenIds, int64_t>;

NgramCounts ngrams(const TokenIds& tokens, size_t n) {
  NgramCounts out;
  for (size_t i = 0; i + n <= tokens.size(); ++i)
    ++out[TokenIds(tokens.begin() + static_cast<std::ptrdiff_t>(i),
                   tokens.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return out;
}

}  // namespace

void BleuStats::add(const TokenIds& hypothesis, const std::vector<TokenIds>& references) {
  if (references.empty()) return;
  ++sentences;
  for (size_t n = 1; n <= 4; ++n) {
    const NgramCounts counts = ngrams(hypothesis, n);
    NgramCounts most;  // the most of each n-gram any one reference holds
    for (const TokenIds& reference : references)
      for (const auto& [gram, count] : ngrams(reference, n)) most[gram] = std::max(most[gram], count);
    for (const auto& [gram, count] : counts) {
      auto it = most.find(gram);
      matched[n - 1] += it == most.end() ? 0 : std::min(count, it->second);
      total[n - 1] += count;
    }
  }
  const auto length = static_cast<int64_t>(hypothesis.size());
  hypothesis_length += length;
  int64_t closest = static_cast<int64_t>(references.front().size());
  for (const TokenIds& reference : references) {
    const auto r = static_cast<int64_t>(reference.size());
    const int64_t gap = std::llabs(r - length), best = std::llabs(closest - length);
    if (gap < best || (gap == best && r < closest)) closest = r;
  }
  reference_length += closest;
}

void BleuStats::merge(const BleuStats& other) {
  for (size_t n = 0; n < 4; ++n) {
    matched[n] += other.matched[n];
    total[n] += other.total[n];
  }
  hypothesis_length += other.hypothesis_length;
  reference_length += other.reference_length;
  sentences += other.sentences;
}

double BleuStats::bleu4() const {
  double log_precision = 0.0;
  for (size_t n = 0; n < 4; ++n) {
    if (matched[n] == 0 || total[n] == 0) return 0.0;
    log_precision += 0.25 * std::log(static_cast<double>(matched[n]) / static_cast<double>(total[n]));
  }
  const auto c = static_cast<double>(hypothesis_length), r = static_cast<double>(reference_length);
  const double brevity = c > r ? 1.0 : std::exp(1.0 - r / c);
  return brevity * std::exp(log_precision);
}

}  // namespace cerebro::metrics
