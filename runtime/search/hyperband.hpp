#pragma once
// Hyperband (Li et al., "Hyperband: A Novel Bandit-Based Approach to
// Hyperparameter Optimization", JMLR 18, 2018), run under MOP.
//
// With R = max_epochs, eta and one epoch as the smallest budget: s_max =
// floor(log_eta R) and B = (s_max + 1) R. Bracket s (s = s_max down to 0) starts
// n = ceil(B/R * eta^s / (s+1)) configs, and its rung i (i = 0 .. s) has
// n_i = floor(n * eta^-i) configs trained r_i = floor(R * eta^(i-s)) epochs; the
// last rung is R. For R = 81, eta = 3 that is the paper's table: brackets of
// 81, 34, 15, 8 and 5 configs starting at 1, 3, 9, 27 and 81 epochs.
//
// Each bracket is the paper's successive halving, synchronous within the
// bracket: a config reaching its bracket's current rung waits (awaiting its
// decision, holding no worker) until every config still racing in the bracket
// has reached the rung; then the best n_(i+1) go on and the others stop. All
// brackets run at once, so MOP's workers stay busy with the other brackets'
// configs while one bracket waits, and the result equals running the brackets
// one after the other. A config that diverges or fails leaves its bracket: the
// rung no longer waits for it (and keeps at most the configs that arrived).

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/spec/hyperband_brackets.hpp"

namespace cerebro {

struct HyperbandOptions {
  int32_t max_epochs = 1;
  int32_t eta = 3;
  int32_t brackets = 0;  // 0 = all
  SearchMetric metric = SearchMetric::val_accuracy;
};

class HyperbandProcedure : public SearchProcedure {
 public:
  // `configs` fill the brackets in order: the first sizes[0] go to the first
  // bracket, and so on. invalid_argument for options out of range, or unless
  // the configs are hyperband_config_count(options) distinct ids.
  static Result<std::unique_ptr<HyperbandProcedure>> create(HyperbandOptions options, std::vector<ConfigId> configs);

  std::string name() const override { return "hyperband"; }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;
  std::vector<SearchDecision> on_config_ended(ConfigId config) override;

  const std::vector<HyperbandBracket>& brackets() const { return brackets_; }
  // Index into brackets() of the config's bracket (a contract violation for
  // a config in none).
  size_t bracket_of(ConfigId config) const;
  // Configs of bracket b that reached its rung i so far.
  int64_t reached(size_t bracket, size_t rung) const { return states_.at(bracket).reached.at(rung); }

 private:
  struct BracketState {
    size_t rung = 0;                     // the rung being filled
    std::set<ConfigId> racing;           // live configs that are to reach the current rung
    std::map<ConfigId, double> arrived;  // scores of those that reached it
    std::vector<int64_t> reached;        // per rung
  };
  HyperbandProcedure(HyperbandOptions options, std::vector<HyperbandBracket> brackets);
  // Decides the current rung of bracket b once every racing config arrived.
  std::vector<SearchDecision> close_rung_if_complete(size_t b);

  HyperbandOptions options_;
  std::vector<HyperbandBracket> brackets_;
  std::vector<BracketState> states_;
  std::map<ConfigId, size_t> bracket_of_;
};

}  // namespace cerebro
