#pragma once
// TpeSampler: the Tree-structured Parzen Estimator (Bergstra, Bardenet, Bengio,
// Kegl, "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011) with the
// behaviour Optuna documents for its TPESampler, over the search spaces of
// runtime/spec/param_value.hpp. Core only: not yet a `search = "tpe"` key.
//
// A proposal is a pure function of (space, seed, options, observations,
// pending): the same inputs give the same config (one std::mt19937_64 seeded
// from the seed and the proposal's index, distributions spelled out by hand as
// in sample_random, parameters in sorted key order; across platforms as far as
// their exp, log and erfc agree, the dependency sample_random has too). Scores are "higher is better" (the
// convention of metric_score in search_procedure.hpp); NaN counts as -inf.
//
//   startup   While fewer than `startup` configs have finished, proposal i
//             (i = observations + pending so far) is config i of
//             sample_random(space, ., seed): a TPE run starts exactly like a
//             random run with the same seed.
//   split     The n finished configs are ranked best first (ties: earlier
//             first); the best gamma(n) = min(ceil(0.1 n), 25) are the good
//             set, the rest the bad set.
//   model     Per hyper-parameter (univariate, as Optuna's default
//             multivariate = false: parameters are modelled independently),
//             l(x) is a Parzen estimator over the good set's values and g(x)
//             over the bad set's: a mixture with one kernel per observation
//             plus a prior kernel (weight prior_weight). Numbers: truncated
//             Gaussians over the bounds, centred on each value, bandwidth the
//             larger gap to its sorted neighbours (the bounds at the ends),
//             clipped to [range / min(100, n + 2), range]; the prior is
//             centred with bandwidth = range. loguniform works in log space;
//             int_uniform over [low - 0.5, high + 0.5] with the kernel's mass
//             per integer, proposals rounded. Lists and choice are categorical:
//             each observation puts 1 + prior_weight / (n + 1) on its value
//             and prior_weight / (n + 1) on every other value. Observations
//             are weighted as Optuna's default_weights: the latest 25 with
//             1, older ones on a ramp from 1/n, in the order given.
//   proposal `candidates` values drawn from l(x); the one with the highest
//             l(x) / g(x) is proposed (the first of equal ones).
//   pending  (the constant liar) configs proposed but still running count as
//             observations with the worst score there is: they join the bad
//             set g(x) after every finished config, so the next proposal
//             moves away from them, and they never enter the good set. As
//             in Optuna, gamma counts finished configs only.
//
// Several objectives (MOTPE, behind the same API): each observation carries
// one score per objective, all higher-is-better. The good set is the
// ceil(0.1 n) best by non-dominated sorting: whole Pareto fronts while they
// fit, and the front that does not fit by NSGA-II crowding distance (largest
// first, then earlier first) instead of Optuna's hypervolume subset
// selection. The good set's observations weigh 1 each (as in Optuna).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

struct TpeOptions {
  int startup = 10;             // random configs before the model (Optuna's n_startup_trials)
  int candidates = 24;          // draws from l(x) per parameter (Optuna's n_ei_candidates)
  double prior_weight = 1.0;    // the prior kernel's weight, > 0
  double gamma_fraction = 0.1;  // good set size: ceil(gamma_fraction * n), in (0, 1] ...
  int gamma_cap = 25;           // ... at most this many; 0 = no cap (multi-objective default)
};

// A finished config: its params (an object with every key of the space; other
// keys are ignored) and its scores, one per objective, higher is better.
struct TpeObservation {
  nlohmann::json params;
  std::vector<double> scores;
};

struct TpeProposal {
  nlohmann::json params;  // object: key -> concrete value inside the space
  bool startup = false;   // true: the random startup draw, not the model's
};

// The size of the good set for n finished configs: min(ceil(fraction * n), cap).
int tpe_gamma(int n, const TpeOptions& options);

// The indices of the good set among `scores` (one vector per observation, all
// the same length), ascending: the n_good best by the rule above for one or
// several objectives.
std::vector<size_t> tpe_good_set(const std::vector<std::vector<double>>& scores, int n_good);

// Non-dominated sorting, all objectives maximized: front 0 is the Pareto front,
// front 1 the front of what remains, ... (NaN counts as -inf).
std::vector<int> pareto_ranks(const std::vector<std::vector<double>>& scores);

class TpeSampler {
 public:
  // Checks the space (as random search does: lists and distributions) and the
  // options; int_uniform ranges must be narrower than 2^53 (they are modelled
  // in doubles).
  static Result<TpeSampler> create(const nlohmann::json& space, uint64_t seed, TpeOptions options = {});

  // The next config to try. `observations` are the finished configs (including
  // failed or diverged ones, with score -inf or NaN) and `pending` the params
  // of configs proposed and still running, each in the order they were
  // proposed; every proposed config must be in exactly one of the two, so
  // their total is the index of this proposal. Errors: an observation or
  // pending config outside the space (a key missing, a value not among a
  // list's, a number out of bounds), observations with differing numbers of
  // scores or none.
  Result<TpeProposal> propose(const std::vector<TpeObservation>& observations,
                              const std::vector<nlohmann::json>& pending = {}) const;

  const TpeOptions& options() const { return options_; }

  // One hyper-parameter of the space as the model sees it.
  struct Param {
    enum class Kind { categorical, uniform, loguniform, int_uniform };
    std::string key;
    Kind kind = Kind::categorical;
    double low = 0, high = 0;             // numbers: the bounds as given (int_uniform inclusive)
    std::vector<nlohmann::json> choices;  // categorical: the candidate values
  };

 private:
  TpeSampler(nlohmann::json space, uint64_t seed, TpeOptions options, std::vector<Param> params);

  nlohmann::json space_;
  uint64_t seed_;
  TpeOptions options_;
  std::vector<Param> params_;  // sorted by key
};

}  // namespace cerebro
