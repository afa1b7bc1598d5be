#include "runtime/search/asha.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

std::vector<int32_t> asha_rungs(int32_t min_epochs, int32_t max_epochs, int32_t eta) {
  std::vector<int32_t> rungs;
  for (int64_t r = min_epochs; r < max_epochs; r *= eta) rungs.push_back(static_cast<int32_t>(r));
  return rungs;
}

Status AshaProcedure::check(const AshaOptions& options) {
  if (options.max_epochs < 1 || options.min_epochs < 1 || options.eta < 2) {
    return Status::invalid_argument(
        fmt::format("asha: needs max_epochs >= 1, min_epochs >= 1 and eta >= 2, got {}, {} and {}", options.max_epochs,
                    options.min_epochs, options.eta));
  }
  return Status::ok_status();
}

Result<std::unique_ptr<AshaProcedure>> AshaProcedure::create(AshaOptions options) {
  if (auto checked = check(options); !checked.ok()) return checked;
  return std::make_unique<AshaProcedure>(options);
}

AshaProcedure::AshaProcedure(AshaOptions options) : options_(options) {
  if (auto checked = check(options_); !checked.ok()) contract_violation("AshaProcedure", checked.message());
  rungs_ = asha_rungs(options_.min_epochs, options_.max_epochs, options_.eta);
  records_.resize(rungs_.size());
  promoted_.assign(rungs_.size(), 0);
}

std::vector<SearchDecision> AshaProcedure::decide(const EpochOutcome& o) {
  const int32_t trained = o.epoch + 1;
  if (trained >= options_.max_epochs) {
    return {SearchDecision::continue_training(o.config, o.epoch,
                                              fmt::format("reached max_epochs {}", options_.max_epochs))};
  }
  auto rung = std::find(rungs_.begin(), rungs_.end(), trained);
  if (rung == rungs_.end()) return {SearchDecision::continue_training(o.config, o.epoch)};
  const size_t k = static_cast<size_t>(rung - rungs_.begin());

  // Scores kept in descending order: the ones strictly better are a prefix.
  auto& scores = records_[k];
  const double score = metric_score(o, options_.metric);
  auto first_not_better = std::lower_bound(scores.begin(), scores.end(), score, std::greater<double>());
  const int64_t better = first_not_better - scores.begin();
  scores.insert(first_not_better, score);
  const int64_t n = static_cast<int64_t>(scores.size());
  const std::string where =
      fmt::format("rung {} epochs: {} of the {} configs there so far are better", *rung, better, n);
  if (better * options_.eta < n) {
    ++promoted_[k];
    return {SearchDecision::continue_training(o.config, o.epoch,
                                              fmt::format("promoted, in the top 1/{} at {}", options_.eta, where))};
  }
  return {SearchDecision::stop(o.config, o.epoch, fmt::format("not in the top 1/{} at {}", options_.eta, where))};
}

}  // namespace cerebro
