#pragma once
// ASHA: asynchronous successive halving (Li et al., "A System for Massively
// Parallel Hyperparameter Tuning", MLSys 2020), decided per config as its
// epoch ends, which is how MOP runs configs: each on its own schedule.
//
// Rungs are at min_epochs * eta^k epochs below max_epochs (R); R itself is the
// top, where a config completes. When a config's epoch ends on a rung, its
// score joins that rung's record and the config
//   continues  if fewer than n/eta of the n configs recorded at the rung so
//              far (itself included) are strictly better: it is in the top
//              1/eta so far, rounded up, so the first arrival always goes on;
//   stops      otherwise, at once: its remaining units are freed.
// Between rungs it always continues. Unlike the paper's variant, which keeps
// a non-promoted config paused in case later arrivals rank below it, a config
// is decided when it arrives (the rule Ray Tune's ASHA uses too): with a fixed
// sample there is no stream of new configs to keep the workers busy while
// paused configs wait. Early arrivals at a rung face less competition, so
// more than n/eta may pass overall; when configs arrive in an order unrelated
// to their quality, about n/eta do.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/search/search_procedure.hpp"

namespace cerebro {

struct AshaOptions {
  int32_t max_epochs = 1;  // R: a config trains at most this many epochs
  int32_t min_epochs = 1;  // r: the first rung
  int32_t eta = 3;         // reduction factor, >= 2
  SearchMetric metric = SearchMetric::val_accuracy;
};

// The decision rungs in epochs: min_epochs * eta^k for k = 0, 1, ... while
// below max_epochs (e.g. r=1, eta=3, R=9: {1, 3}). Empty when min_epochs >= max_epochs.
std::vector<int32_t> asha_rungs(int32_t min_epochs, int32_t max_epochs, int32_t eta);

class AshaProcedure : public SearchProcedure {
 public:
  // invalid_argument for options out of range (max_epochs < 1, min_epochs <
  // 1, eta < 2); the spec parser reports those first.
  static Status check(const AshaOptions& options);
  static Result<std::unique_ptr<AshaProcedure>> create(AshaOptions options);
  // For options that pass check(): others are a contract violation.
  explicit AshaProcedure(AshaOptions options);

  std::string name() const override { return "asha"; }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;

  const std::vector<int32_t>& rungs() const { return rungs_; }
  // Configs that reached rung k (by index into rungs()) and how many of them went on.
  int64_t reached(size_t rung) const { return static_cast<int64_t>(records_.at(rung).size()); }
  int64_t promoted(size_t rung) const { return promoted_.at(rung); }

 private:
  AshaOptions options_;
  std::vector<int32_t> rungs_;
  std::vector<std::vector<double>> records_;  // per rung: the scores recorded so far
  std::vector<int64_t> promoted_;
};

}  // namespace cerebro
