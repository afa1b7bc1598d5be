#include "runtime/search/tpe.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "runtime/search/search_space.hpp"
#include "runtime/spec/param_value.hpp"

namespace cerebro {
namespace {

using nlohmann::json;
using Kind = TpeSampler::Param::Kind;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2Pi = 2.50662827463100050242;     // sqrt(2 pi)
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

// ---- Random numbers, spelled out so every platform draws the same ----

// The splitmix64 finalizer: spreads (seed, proposal index) over the generator's seed.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform double in [0, 1) from the top 53 bits of one draw (as sample_random).
double unit_double(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

// ---- The standard normal distribution ----

double square(double x) { return x * x; }

double ndtr(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// log Phi(z), accurate in both tails (an asymptotic series below -20, where
// erfc underflows).
double log_ndtr(double z) {
  if (z > 0) return std::log1p(-ndtr(-z));
  if (z > -20) return std::log(ndtr(z));
  const double inv_z2 = 1.0 / (z * z);
  double term = 1.0, series = 1.0;
  for (int i = 1; i < 12; ++i) {  // 1 - 1/z^2 + 3/z^4 - 15/z^6 ...: converged by then at |z| >= 20
    term *= -(2 * i - 1) * inv_z2;
    series += term;
  }
  return -0.5 * z * z - std::log(-z) - kLogSqrt2Pi + std::log(series);
}

// log(exp(lp) - exp(lq)) for lp >= lq.
double log_diff(double lp, double lq) {
  if (lp == -kInf) return -kInf;
  return lp + std::log1p(-std::exp(lq - lp));
}

// log of the standard normal's mass in [a, b], computed in the left tail where
// it is accurate (the right tail by symmetry).
double log_gauss_mass(double a, double b) {
  if (b <= 0) return log_diff(log_ndtr(b), log_ndtr(a));
  if (a > 0) return log_diff(log_ndtr(-a), log_ndtr(-b));
  return std::log1p(-ndtr(a) - ndtr(-b));
}

// Phi^-1(p) for p in (0, 1): Acklam's rational approximation (relative error
// 1.2e-9) refined by one Halley step against erfc, to about double precision.
double ndtri(double p) {
  p = std::min(std::max(p, DBL_MIN), 1.0 - DBL_EPSILON / 2);
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = ndtr(x) - p;
  const double u = e * kSqrt2Pi * std::exp(0.5 * x * x);
  return x - u / (1 + 0.5 * x * u);
}

// A standard normal truncated to [a, b] with a <= 0 <= b (every kernel is
// centred inside the bounds), by inversion; the upper half is inverted from
// the upper tail so no precision is lost near 1.
double truncated_normal(double a, double b, double u) {
  const double p = ndtr(a) + u * (ndtr(b) - ndtr(a));
  const double z = p <= 0.5 ? ndtri(p) : -ndtri(ndtr(-b) + (1 - u) * (ndtr(-a) - ndtr(-b)));
  return std::min(std::max(z, a), b);
}

double log_sum_exp(const std::vector<double>& terms) {
  double top = -kInf;
  for (double t : terms) top = std::max(top, t);
  if (top == -kInf) return -kInf;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

// ---- Parzen estimators ----

// Optuna's default_weights: 1 for the latest 25 observations, a linear ramp
// from 1/n up to 1 for the older ones (in the order given).
std::vector<double> observation_weights(size_t n, bool uniform) {
  std::vector<double> w(n, 1.0);
  if (uniform || n <= 25) return w;
  const size_t ramp = n - 25;
  const double low = 1.0 / static_cast<double>(n);
  for (size_t i = 0; i < ramp; ++i) {
    w[i] = ramp == 1 ? low : low + (1.0 - low) * static_cast<double>(i) / static_cast<double>(ramp - 1);
  }
  return w;
}

// Mixture weights: the observations' and the prior's, normalized, as logs.
std::vector<double> log_mixture_weights(size_t n, bool uniform, double prior_weight) {
  std::vector<double> w = observation_weights(n, uniform);
  w.push_back(n == 0 ? 1.0 : prior_weight);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x = std::log(x / total);
  return w;
}

// An index drawn with the given probabilities (summing to 1) from u in [0, 1).
size_t draw_index(const std::vector<double>& probabilities, double u) {
  double cumulative = 0;
  for (size_t k = 0; k + 1 < probabilities.size(); ++k) {
    cumulative += probabilities[k];
    if (u < cumulative) return k;
  }
  return probabilities.size() - 1;
}

// Truncated Gaussian kernels on [lo, hi] in the model's space (log space for
// loguniform, widened by half a step for integers).
struct NumericEstimator {
  double lo = 0, hi = 0;
  bool discrete = false;
  std::vector<double> mu, sigma, weight, log_weight, log_mass;

  NumericEstimator(const std::vector<double>& values, bool uniform_weights, double prior_weight, double lo_, double hi_,
                   bool discrete_)
      : lo(lo_), hi(hi_), discrete(discrete_) {
    const size_t n = values.size();
    const double range = hi - lo;
    // Bandwidth: the larger gap to the sorted neighbours, the bounds at the
    // ends; the outermost two look inward only (Optuna's consider_endpoints = false).
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return values[x] < values[y]; });
    std::vector<double> sorted{lo};
    for (size_t i : order) sorted.push_back(values[i]);
    sorted.push_back(hi);
    std::vector<double> sorted_sigma(n);
    for (size_t i = 0; i < n; ++i) sorted_sigma[i] = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
    if (n >= 2) {
      sorted_sigma[0] = sorted[2] - sorted[1];
      sorted_sigma[n - 1] = sorted[n] - sorted[n - 1];
    }
    const double min_sigma = range / std::min(100.0, static_cast<double>(n) + 2.0);  // Optuna's magic clip
    sigma.assign(n, 0);
    for (size_t i = 0; i < n; ++i) sigma[order[i]] = std::min(std::max(sorted_sigma[i], min_sigma), range);
    mu = values;
    mu.push_back(0.5 * (lo + hi));  // the prior: centred, as wide as the range
    sigma.push_back(range);
    log_weight = log_mixture_weights(n, uniform_weights, prior_weight);
    for (double lw : log_weight) weight.push_back(std::exp(lw));
    for (size_t k = 0; k < mu.size(); ++k) {
      log_mass.push_back(log_gauss_mass((lo - mu[k]) / sigma[k], (hi - mu[k]) / sigma[k]));
    }
  }

  double sample(std::mt19937_64& gen) const {
    const size_t k = draw_index(weight, unit_double(gen));
    const double z = truncated_normal((lo - mu[k]) / sigma[k], (hi - mu[k]) / sigma[k], unit_double(gen));
    return std::min(std::max(mu[k] + sigma[k] * z, lo), hi);
  }

  // log density at x (continuous), or log mass of the integer x's cell.
  double log_pdf(double x) const {
    std::vector<double> terms(mu.size());
    for (size_t k = 0; k < mu.size(); ++k) {
      const double kernel = discrete ? log_gauss_mass((x - 0.5 - mu[k]) / sigma[k], (x + 0.5 - mu[k]) / sigma[k])
                                     : -0.5 * square((x - mu[k]) / sigma[k]) - kLogSqrt2Pi - std::log(sigma[k]);
      terms[k] = log_weight[k] + kernel - log_mass[k];
    }
    return log_sum_exp(terms);
  }
};

// Categorical: the mixture's probability of each choice.
std::vector<double> categorical_pmf(const std::vector<size_t>& observed, size_t choices, bool uniform_weights,
                                    double prior_weight) {
  const std::vector<double> log_weight = log_mixture_weights(observed.size(), uniform_weights, prior_weight);
  const double floor = prior_weight / static_cast<double>(observed.size() + 1);
  // The prior kernel is uniform; an observation's is `floor` everywhere plus 1 on its value.
  std::vector<double> pmf(choices, std::exp(log_weight.back()) / static_cast<double>(choices));
  for (size_t k = 0; k < observed.size(); ++k) {
    const double w = std::exp(log_weight[k]) / (1.0 + floor * static_cast<double>(choices));
    for (size_t c = 0; c < choices; ++c) pmf[c] += w * (floor + (c == observed[k] ? 1.0 : 0.0));
  }
  return pmf;
}

// ---- The space as the model sees it ----

bool is_degenerate(const TpeSampler::Param& p) {
  return p.kind == Kind::categorical ? p.choices.size() == 1 : p.kind == Kind::int_uniform && p.low == p.high;
}

Result<TpeSampler::Param> parse_param(const std::string& key, const json& entry) {
  TpeSampler::Param p;
  p.key = key;
  if (!is_distribution(entry)) {
    const json list = entry.is_array() ? entry : json::array({entry});
    p.choices.assign(list.begin(), list.end());
    return p;
  }
  const auto dist = distribution_of(entry);  // a checked space: one of the known distributions
  if (dist == Distribution::choice) {
    const json& values = entry.at("values");
    p.choices.assign(values.begin(), values.end());
    return p;
  }
  p.kind = dist == Distribution::uniform      ? Kind::uniform
           : dist == Distribution::loguniform ? Kind::loguniform
                                              : Kind::int_uniform;
  if (p.kind == Kind::int_uniform) {
    const int64_t low = entry.at("low").get<int64_t>(), high = entry.at("high").get<int64_t>();
    if (static_cast<uint64_t>(high) - static_cast<uint64_t>(low) >= (uint64_t{1} << 53)) {
      return Status::invalid_argument(
          fmt::format("[space] {}: tpe models int_uniform in doubles and needs high - low < 2^53", key));
    }
    p.low = static_cast<double>(low);
    p.high = static_cast<double>(high);
  } else {
    p.low = entry.at("low").get<double>();
    p.high = entry.at("high").get<double>();
  }
  return p;
}

// A config's value for p in the model's space: the choice's index for a
// categorical, log x for loguniform, x otherwise. `who` names the config in errors.
Result<double> model_value(const TpeSampler::Param& p, const json& params, const std::string& who) {
  if (!params.is_object() || !params.contains(p.key)) {
    return Status::invalid_argument(fmt::format("[tpe] {} has no value for {}", who, p.key));
  }
  const json& v = params.at(p.key);
  if (p.kind == Kind::categorical) {
    for (size_t c = 0; c < p.choices.size(); ++c) {
      if (p.choices[c] == v) return static_cast<double>(c);
    }
    return Status::invalid_argument(
        fmt::format("[tpe] {} has {} = {}, which is not one of the space's values", who, p.key, v.dump()));
  }
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  const bool integral = p.kind != Kind::int_uniform || x == std::floor(x);
  if (!(x >= p.low && x <= p.high) || !integral) {
    return Status::invalid_argument(fmt::format("[tpe] {} has {} = {}, outside the space's {} [{}, {}]", who, p.key,
                                                v.dump(), p.kind == Kind::int_uniform ? "integers" : "range", p.low,
                                                p.high));
  }
  return p.kind == Kind::loguniform ? std::log(x) : x;
}

// A value drawn in the model's space back to a concrete value inside the space.
json concrete_value(const TpeSampler::Param& p, double x) {
  switch (p.kind) {
    case Kind::categorical: return p.choices.at(static_cast<size_t>(x));
    case Kind::int_uniform: {
      const double rounded = std::min(std::max(p.low + std::floor(x - p.low + 0.5), p.low), p.high);
      return static_cast<int64_t>(rounded);
    }
    case Kind::uniform:
    case Kind::loguniform: {
      double v = p.kind == Kind::loguniform ? std::exp(x) : x;
      // As sample_random: inside [low, high) even where exp rounds past a bound.
      v = std::max(v, p.low);
      if (v >= p.high) v = std::nextafter(p.high, p.low);
      return v;
    }
  }
  return nullptr;
}

// The proposal for one parameter: `candidates` draws from l(x), the best l/g.
json propose_param(const TpeSampler::Param& p, const std::vector<double>& good, const std::vector<double>& bad,
                   bool uniform_good_weights, const TpeOptions& options, std::mt19937_64& gen) {
  std::vector<double> draws;
  std::vector<double> score;
  if (p.kind == Kind::categorical) {
    const auto to_index = [](const std::vector<double>& xs) {
      std::vector<size_t> out;
      for (double x : xs) out.push_back(static_cast<size_t>(x));
      return out;
    };
    const auto l = categorical_pmf(to_index(good), p.choices.size(), uniform_good_weights, options.prior_weight);
    const auto g = categorical_pmf(to_index(bad), p.choices.size(), false, options.prior_weight);
    for (int i = 0; i < options.candidates; ++i) {
      const size_t c = draw_index(l, unit_double(gen));
      draws.push_back(static_cast<double>(c));
      score.push_back(std::log(l[c]) - std::log(g[c]));
    }
  } else {
    const bool discrete = p.kind == Kind::int_uniform;
    double lo = discrete ? p.low - 0.5 : p.low, hi = discrete ? p.high + 0.5 : p.high;
    if (p.kind == Kind::loguniform) {
      lo = std::log(p.low);
      hi = std::log(p.high);
    }
    const NumericEstimator l(good, uniform_good_weights, options.prior_weight, lo, hi, discrete);
    const NumericEstimator g(bad, false, options.prior_weight, lo, hi, discrete);
    for (int i = 0; i < options.candidates; ++i) {
      double x = l.sample(gen);
      if (discrete) x = std::min(std::max(p.low + std::floor(x - p.low + 0.5), p.low), p.high);
      draws.push_back(x);
      score.push_back(l.log_pdf(x) - g.log_pdf(x));
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < draws.size(); ++i) {
    if (score[i] > score[best] || (std::isnan(score[best]) && !std::isnan(score[i]))) best = i;
  }
  return concrete_value(p, draws[best]);
}

double score_or_worst(double s) { return std::isnan(s) ? -kInf : s; }

// a dominates b: at least as good in every objective, better in one (maximizing).
bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better = false;
  for (size_t k = 0; k < a.size(); ++k) {
    const double x = score_or_worst(a[k]), y = score_or_worst(b[k]);
    if (x < y) return false;
    if (x > y) better = true;
  }
  return better;
}

// NSGA-II crowding distance of each member of one front (indices into scores).
std::vector<double> crowding_distance(const std::vector<std::vector<double>>& scores,
                                      const std::vector<size_t>& front) {
  std::vector<double> distance(front.size(), 0.0);
  for (size_t k = 0; k < scores[front[0]].size(); ++k) {
    std::vector<size_t> order(front.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const auto value = [&](size_t i) { return score_or_worst(scores[front[i]][k]); };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return value(x) < value(y); });
    distance[order.front()] = distance[order.back()] = kInf;
    const double span = value(order.back()) - value(order.front());
    if (!(span > 0) || !std::isfinite(span)) continue;  // all equal, or an -inf among them
    for (size_t i = 1; i + 1 < order.size(); ++i) {
      distance[order[i]] += (value(order[i + 1]) - value(order[i - 1])) / span;
    }
  }
  return distance;
}

}  // namespace

int tpe_gamma(int n, const TpeOptions& options) {
  // ceil(0.1 n) as written, not as doubles compute it: 0.1 * 30 is
  // 3.0000000000000004, which would round up to 4 (as it does in Optuna).
  int good = static_cast<int>(std::ceil(options.gamma_fraction * n - 1e-9));
  if (options.gamma_cap > 0) good = std::min(good, options.gamma_cap);
  return std::max(0, std::min(good, n));
}

std::vector<int> pareto_ranks(const std::vector<std::vector<double>>& scores) {
  // Deb's fast non-dominated sort: O(n^2 m).
  const size_t n = scores.size();
  std::vector<std::vector<size_t>> dominated(n);
  std::vector<int> dominators(n, 0), rank(n, -1);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i != j && dominates(scores[i], scores[j])) {
        dominated[i].push_back(j);
        ++dominators[j];
      }
    }
  }
  std::vector<size_t> front;
  for (size_t i = 0; i < n; ++i) {
    if (dominators[i] == 0) front.push_back(i);
  }
  for (int r = 0; !front.empty(); ++r) {
    std::vector<size_t> next;
    for (size_t i : front) {
      rank[i] = r;
      for (size_t j : dominated[i]) {
        if (--dominators[j] == 0) next.push_back(j);
      }
    }
    std::sort(next.begin(), next.end());
    front = std::move(next);
  }
  return rank;
}

std::vector<size_t> tpe_good_set(const std::vector<std::vector<double>>& scores, int n_good) {
  const size_t n = scores.size();
  const size_t want = static_cast<size_t>(std::max(0, std::min<int>(n_good, static_cast<int>(n))));
  std::vector<size_t> good;
  if (want == 0) return good;
  if (scores[0].size() == 1) {
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score_or_worst(scores[a][0]) > score_or_worst(scores[b][0]); });
    good.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(want));
  } else {
    const std::vector<int> rank = pareto_ranks(scores);
    for (int r = 0; good.size() < want; ++r) {
      std::vector<size_t> front;
      for (size_t i = 0; i < n; ++i) {
        if (rank[i] == r) front.push_back(i);
      }
      if (good.size() + front.size() <= want) {
        good.insert(good.end(), front.begin(), front.end());
        continue;
      }
      // The front that does not fit: the most isolated members first.
      const std::vector<double> distance = crowding_distance(scores, front);
      std::vector<size_t> order(front.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distance[a] > distance[b]; });
      for (size_t i = 0; good.size() < want; ++i) good.push_back(front[order[i]]);
    }
  }
  std::sort(good.begin(), good.end());
  return good;
}

TpeSampler::TpeSampler(json space, uint64_t seed, TpeOptions options, std::vector<Param> params)
    : space_(std::move(space)), seed_(seed), options_(options), params_(std::move(params)) {}

Result<TpeSampler> TpeSampler::create(const json& space, uint64_t seed, TpeOptions options) {
  if (auto st = check_space(space, /*allow_distributions=*/true); !st) return st;
  if (options.startup < 0)
    return Status::invalid_argument(fmt::format("[tpe] startup must be >= 0, got {}", options.startup));
  if (options.candidates < 1) {
    return Status::invalid_argument(fmt::format("[tpe] candidates must be >= 1, got {}", options.candidates));
  }
  if (!(options.prior_weight > 0) || !std::isfinite(options.prior_weight)) {
    return Status::invalid_argument(
        fmt::format("[tpe] prior_weight must be a positive number, got {}", options.prior_weight));
  }
  if (!(options.gamma_fraction > 0 && options.gamma_fraction <= 1)) {
    return Status::invalid_argument(
        fmt::format("[tpe] gamma_fraction must be in (0, 1], got {}", options.gamma_fraction));
  }
  if (options.gamma_cap < 0) {
    return Status::invalid_argument(fmt::format("[tpe] gamma_cap must be >= 0, got {}", options.gamma_cap));
  }
  std::vector<Param> params;
  for (auto it = space.begin(); it != space.end(); ++it) {  // nlohmann objects iterate sorted
    auto p = parse_param(it.key(), it.value());
    if (!p) return p.status();
    params.push_back(std::move(*p));
  }
  return TpeSampler(space, seed, options, std::move(params));
}

Result<TpeProposal> TpeSampler::propose(const std::vector<TpeObservation>& observations,
                                        const std::vector<json>& pending) const {
  const size_t objectives = observations.empty() ? 1 : observations[0].scores.size();
  for (size_t i = 0; i < observations.size(); ++i) {
    if (observations[i].scores.empty() || observations[i].scores.size() != objectives) {
      return Status::invalid_argument(fmt::format("[tpe] observation {} has {} scores, the first has {}", i,
                                                  observations[i].scores.size(), objectives));
    }
  }
  // Every config in the model's space (this also checks them all, startup or not).
  std::vector<std::vector<double>> values(params_.size());
  for (size_t k = 0; k < params_.size(); ++k) {
    for (size_t i = 0; i < observations.size(); ++i) {
      auto v = model_value(params_[k], observations[i].params, fmt::format("observation {}", i));
      if (!v) return v.status();
      values[k].push_back(*v);
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      auto v = model_value(params_[k], pending[i], fmt::format("pending config {}", i));
      if (!v) return v.status();
      values[k].push_back(*v);
    }
  }
  const size_t index = observations.size() + pending.size();
  if (observations.size() < static_cast<size_t>(options_.startup)) {
    // sample_random refuses more than kMaxConfigs samples: so does the startup.
    auto configs = sample_random(space_, static_cast<int>(std::min<size_t>(index + 1, INT32_MAX)), seed_);
    if (!configs) return configs.status();
    return TpeProposal{configs->back().params, true};
  }

  std::vector<std::vector<double>> scores;
  for (const auto& o : observations) scores.push_back(o.scores);
  TpeOptions gamma_options = options_;
  if (objectives > 1) gamma_options.gamma_cap = 0;  // Optuna's multi-objective gamma has no cap
  const int n_good = tpe_gamma(static_cast<int>(observations.size()), gamma_options);
  const std::vector<size_t> good_index = tpe_good_set(scores, n_good);
  std::vector<bool> is_good(index, false);
  for (size_t i : good_index) is_good[i] = true;

  std::mt19937_64 gen(mix64(seed_ ^ mix64(index)));
  json params = json::object();
  for (size_t k = 0; k < params_.size(); ++k) {
    const Param& p = params_[k];
    if (is_degenerate(p)) {
      params[p.key] = p.kind == Kind::categorical ? p.choices[0] : json(static_cast<int64_t>(p.low));
      continue;
    }
    // Both sets in the order proposed; pending configs (after all observations) are always bad.
    std::vector<double> good, bad;
    for (size_t i = 0; i < index; ++i) (is_good[i] ? good : bad).push_back(values[k][i]);
    params[p.key] = propose_param(p, good, bad, /*uniform_good_weights=*/objectives > 1, options_, gen);
  }
  return TpeProposal{std::move(params), false};
}

}  // namespace cerebro
