// TpeSampler (runtime/search/tpe.hpp): determinism, proposals inside the
// space, the random startup, the constant liar, bad input, and TPE against
// random search on synthetic objectives (no training), one and two objectives.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "runtime/search/search_space.hpp"
#include "runtime/search/tpe.hpp"

using namespace cerebro;
using nlohmann::json;

namespace {

// Five hyper-parameters of every kind the space has.
json mixed_space() {
  return json::parse(R"({
    "x": {"dist": "uniform", "low": -5.0, "high": 5.0},
    "y": {"dist": "uniform", "low": -5.0, "high": 5.0},
    "lr": {"dist": "loguniform", "low": 1e-5, "high": 0.1},
    "width": {"dist": "int_uniform", "low": 1, "high": 64},
    "act": ["relu", "tanh", "sigmoid", "gelu"]
  })");
}

// A smooth objective over mixed_space, higher is better, best 0 at x = 1.3,
// y = -2.1, lr = 10^-3.2, width = 40, act = tanh: a shifted sphere with each
// term scaled to about [0, 1] over the space.
double mixed_objective(const json& p) {
  const double x = p.at("x").get<double>(), y = p.at("y").get<double>();
  const double log_lr = std::log10(p.at("lr").get<double>());
  const double width = static_cast<double>(p.at("width").get<int64_t>());
  const double act = p.at("act") == "tanh" ? 0.0 : p.at("act") == "gelu" ? 0.15 : 0.3;
  return -(std::pow((x - 1.3) / 5, 2) + std::pow((y + 2.1) / 5, 2) + std::pow((log_lr + 3.2) / 2, 2) +
           std::pow((width - 40.0) / 32, 2) + act);
}

TpeSampler make_sampler(const json& space, uint64_t seed, TpeOptions options = {}) {
  auto sampler = TpeSampler::create(space, seed, options);
  BOOST_REQUIRE_MESSAGE(sampler.ok(), sampler.error());
  return std::move(sampler).value();
}

json propose(const TpeSampler& sampler, const std::vector<TpeObservation>& observations,
             const std::vector<json>& pending = {}) {
  auto proposal = sampler.propose(observations, pending);
  BOOST_REQUIRE_MESSAGE(proposal.ok(), proposal.error());
  return proposal->params;
}

std::vector<double> as_scores(double score) { return {score}; }
std::vector<double> as_scores(std::vector<double> scores) { return scores; }

// `budget` proposals, `in_flight` at a time: each step the oldest running
// config finishes (scored by `objective`), then the free slot gets a proposal
// conditioned on every finished one, the others pending. in_flight = 1 is
// plain sequential TPE. Returns the observations in the order they finished.
template <class Objective>
std::vector<TpeObservation> run_tpe(const TpeSampler& sampler, int budget, int in_flight, Objective objective) {
  std::vector<TpeObservation> finished;
  std::deque<json> running;
  int proposed = 0;
  while (static_cast<int>(finished.size()) < budget) {
    while (static_cast<int>(running.size()) < in_flight && proposed < budget) {
      running.push_back(propose(sampler, finished, {running.begin(), running.end()}));
      ++proposed;
    }
    json done = running.front();
    running.pop_front();
    finished.push_back({done, as_scores(objective(done))});
  }
  return finished;
}

double best_single(const std::vector<TpeObservation>& observations) {
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& o : observations) best = std::max(best, o.scores[0]);
  return best;
}

double best_random(const json& space, int budget, uint64_t seed) {
  double best = -std::numeric_limits<double>::infinity();
  const auto sampled = sample_random(space, budget, seed).value();
  for (const auto& c : sampled) best = std::max(best, mixed_objective(c.params));
  return best;
}

void check_inside(const json& space, const json& params) {
  for (auto it = space.begin(); it != space.end(); ++it) {
    BOOST_REQUIRE(params.contains(it.key()));
    const json& v = params.at(it.key());
    const json& entry = it.value();
    if (entry.is_array()) {
      BOOST_TEST((std::find(entry.begin(), entry.end(), v) != entry.end()), it.key() << " = " << v);
    } else if (!entry.is_object()) {
      BOOST_TEST(v == entry);
    } else if (entry.at("dist") == "choice") {
      const json& values = entry.at("values");
      BOOST_TEST((std::find(values.begin(), values.end(), v) != values.end()), it.key() << " = " << v);
    } else if (entry.at("dist") == "int_uniform") {
      BOOST_REQUIRE(v.is_number_integer());
      BOOST_TEST(v.get<int64_t>() >= entry.at("low").get<int64_t>());
      BOOST_TEST(v.get<int64_t>() <= entry.at("high").get<int64_t>());
    } else {  // uniform, loguniform: [low, high) as random search
      BOOST_REQUIRE(v.is_number_float());
      BOOST_TEST(v.get<double>() >= entry.at("low").get<double>(), it.key() << " = " << v);
      BOOST_TEST(v.get<double>() < entry.at("high").get<double>(), it.key() << " = " << v);
    }
  }
}

// 2-D hypervolume (both objectives maximized) dominated by `points` above
// the reference point `ref`.
double hypervolume_2d(std::vector<std::vector<double>> points, const std::vector<double>& ref) {
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a[0] > b[0]; });
  double volume = 0, best_second = ref[1];
  for (const auto& p : points) {  // sweep from the best first objective down
    if (p[0] <= ref[0] || p[1] <= best_second) continue;
    volume += (p[0] - ref[0]) * (p[1] - best_second);
    best_second = p[1];
  }
  return volume;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tpe)

BOOST_AUTO_TEST_CASE(gamma_is_optunas_default) {
  const TpeOptions options;
  BOOST_TEST(tpe_gamma(0, options) == 0);
  BOOST_TEST(tpe_gamma(1, options) == 1);
  BOOST_TEST(tpe_gamma(10, options) == 1);
  BOOST_TEST(tpe_gamma(11, options) == 2);
  BOOST_TEST(tpe_gamma(30, options) == 3);  // not 4: 0.1 * 30 is 3.0000000000000004 in doubles
  BOOST_TEST(tpe_gamma(249, options) == 25);
  BOOST_TEST(tpe_gamma(1000, options) == 25);
  TpeOptions uncapped;
  uncapped.gamma_cap = 0;
  BOOST_TEST(tpe_gamma(1000, uncapped) == 100);
}

BOOST_AUTO_TEST_CASE(good_set_of_one_objective_is_the_best_with_nan_last) {
  const double nan = std::nan("");
  const std::vector<std::vector<double>> scores = {{0.5}, {0.9}, {nan}, {0.9}, {0.1}};
  BOOST_TEST((tpe_good_set(scores, 2) == std::vector<size_t>{1, 3}));
  BOOST_TEST((tpe_good_set(scores, 3) == std::vector<size_t>{0, 1, 3}));
  BOOST_TEST((tpe_good_set(scores, 5) == std::vector<size_t>{0, 1, 2, 3, 4}));
  BOOST_TEST(tpe_good_set(scores, 0).empty());
}

BOOST_AUTO_TEST_CASE(pareto_ranks_and_the_good_set_of_two_objectives) {
  const std::vector<std::vector<double>> scores = {{1, 0}, {0, 1}, {0.5, 0.5}, {0.4, 0.4}, {0, 0}, {0.4, 0.4}};
  BOOST_TEST((pareto_ranks(scores) == std::vector<int>{0, 0, 0, 1, 2, 1}));
  BOOST_TEST((tpe_good_set(scores, 3) == std::vector<size_t>{0, 1, 2}));     // exactly the first front
  BOOST_TEST((tpe_good_set(scores, 4) == std::vector<size_t>{0, 1, 2, 3}));  // a tie in front 1: the earlier

  // One front of four on a line: the extremes have infinite crowding distance,
  // the two middle ones equal distances, so the earlier of them comes next.
  const std::vector<std::vector<double>> line = {{0, 3}, {1, 2}, {2, 1}, {3, 0}, {0, 0}};
  BOOST_TEST((tpe_good_set(line, 2) == std::vector<size_t>{0, 3}));
  BOOST_TEST((tpe_good_set(line, 3) == std::vector<size_t>{0, 1, 3}));
}

BOOST_AUTO_TEST_CASE(same_inputs_give_the_same_proposals_and_another_seed_others) {
  const json space = mixed_space();
  const auto a = run_tpe(make_sampler(space, 7), 30, 3, mixed_objective);
  const auto b = run_tpe(make_sampler(space, 7), 30, 3, mixed_objective);
  const auto c = run_tpe(make_sampler(space, 8), 30, 3, mixed_objective);
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i].params == b[i].params, "proposal " << i);
    differ += a[i].params != c[i].params;
  }
  BOOST_TEST(differ == 30);  // every proposal has at least one float drawn from another stream

  // One call, repeated on the same sampler: the same answer (no hidden state).
  const TpeSampler sampler = make_sampler(space, 7);
  const std::vector<json> pending = {a[28].params, a[29].params};
  const std::vector<TpeObservation> history(a.begin(), a.begin() + 28);
  BOOST_TEST(propose(sampler, history, pending) == propose(sampler, history, pending));
}

BOOST_AUTO_TEST_CASE(proposals_stay_inside_the_space) {
  json space = mixed_space();
  space["narrow"] = json::parse(R"({"dist": "loguniform", "low": 0.001, "high": 0.0011})");
  space["shape"] = json::parse(R"({"dist": "choice", "values": [[256, 128], [64], {"deep": true}]})");
  space["fixed"] = "sgd";
  space["one"] = json::array({4});
  space["same"] = json::parse(R"({"dist": "int_uniform", "low": 3, "high": 3})");
  space["bit"] = json::parse(R"({"dist": "int_uniform", "low": 0, "high": 1})");
  for (uint64_t seed : {1, 2, 3}) {
    const auto history = run_tpe(make_sampler(space, seed, TpeOptions{5}), 40, 2, mixed_objective);
    for (const auto& o : history) check_inside(space, o.params);
  }
}

// loguniform is modelled in log space: with no startup and no history, l(x)
// and g(x) are both the prior, so the proposal is a draw from the prior,
// centred on the geometric mean 10^-3 of [10^-6, 1]: about half the draws
// fall below it. (A prior in linear space would put 99.9% above it.)
BOOST_AUTO_TEST_CASE(loguniform_is_modelled_in_log_space) {
  const json space = json::parse(R"({"lr": {"dist": "loguniform", "low": 1e-6, "high": 1.0}})");
  int below = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const auto proposal = make_sampler(space, seed, TpeOptions{0}).propose({}).value();
    BOOST_TEST(!proposal.startup);
    below += proposal.params.at("lr").get<double>() < 1e-3;
  }
  BOOST_TEST(below > 70);
  BOOST_TEST(below < 130);
}

BOOST_AUTO_TEST_CASE(startup_proposals_are_random_search_configs) {
  const json space = mixed_space();
  const auto random = sample_random(space, 20, 11).value();
  const TpeSampler sampler = make_sampler(space, 11);  // startup = 10
  std::vector<TpeObservation> observations;
  for (int i = 0; i < 10; ++i) {
    auto proposal = sampler.propose(observations).value();
    BOOST_TEST(proposal.startup);
    BOOST_TEST(proposal.params == random[i].params, "proposal " << i);
    observations.push_back({proposal.params, {mixed_objective(proposal.params)}});
  }
  auto model = sampler.propose(observations).value();
  BOOST_TEST(!model.startup);

  // Under MOP fewer than `startup` may have finished while more are running:
  // proposal i is still random search's config i.
  const std::vector<TpeObservation> finished(observations.begin(), observations.begin() + 8);
  std::vector<json> running;
  for (int i = 8; i < 14; ++i) running.push_back(random[i].params);
  auto proposal = sampler.propose(finished, running).value();
  BOOST_TEST(proposal.startup);
  BOOST_TEST(proposal.params == random[14].params);
}

// The constant liar: configs still running join g(x), so the next proposal
// moves away from them. The model's random stream depends only on the seed
// and the proposal's index, and pending configs are never in the good set,
// so l(x) and its candidates are the same whether four configs are running
// near the good region or far from it: only g(x) differs.
BOOST_AUTO_TEST_CASE(pending_configs_push_the_next_proposal_away) {
  const json space = json::parse(R"({"x": {"dist": "uniform", "low": 0.0, "high": 1.0}})");
  const auto objective = [](const json& p) { return -std::abs(p.at("x").get<double>() - 0.3); };
  int farther = 0, closer = 0;
  double near_total = 0, far_total = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const TpeSampler sampler = make_sampler(space, seed);
    const auto history = run_tpe(sampler, 20, 1, objective);
    const std::vector<json> running_near(4, json{{"x", 0.3}}), running_far(4, json{{"x", 0.95}});
    const double near = std::abs(propose(sampler, history, running_near).at("x").get<double>() - 0.3);
    const double far = std::abs(propose(sampler, history, running_far).at("x").get<double>() - 0.3);
    farther += near > far;
    closer += near < far;
    near_total += near;
    far_total += far;
  }
  BOOST_TEST_MESSAGE("running near 0.3 moved the proposal farther in "
                     << farther << " of 30 seeds, closer in " << closer << "; mean distance " << near_total / 30
                     << " vs " << far_total / 30);
  // Measured: farther in 15, closer in 5 (equal otherwise); mean distance
  // 0.25 vs 0.17. Without the liar both would propose the same x.
  BOOST_TEST(farther > 2 * closer);
  BOOST_TEST(near_total > 1.2 * far_total);
}

BOOST_AUTO_TEST_CASE(bad_input_is_a_clear_error) {
  BOOST_TEST(!TpeSampler::create(json::object(), 1).ok());
  BOOST_TEST(!TpeSampler::create(json::parse(R"({"x": {"dist": "normal"}})"), 1).ok());
  const auto wide =
      TpeSampler::create(json::parse(R"({"n": {"dist": "int_uniform", "low": 0, "high": 9007199254740992}})"), 1);
  BOOST_TEST(!wide.ok());
  BOOST_TEST(wide.error().find("2^53") != std::string::npos, wide.error());
  for (TpeOptions bad : {TpeOptions{-1}, TpeOptions{10, 0}, TpeOptions{10, 24, 0.0}, TpeOptions{10, 24, 1.0, 0.0},
                         TpeOptions{10, 24, 1.0, 1.5}, TpeOptions{10, 24, 1.0, 0.1, -1}}) {
    BOOST_TEST(!TpeSampler::create(mixed_space(), 1, bad).ok());
  }

  const TpeSampler sampler = make_sampler(mixed_space(), 1);
  const json good = {{"x", 0.0}, {"y", 0.0}, {"lr", 0.001}, {"width", 8}, {"act", "relu"}};
  BOOST_TEST(sampler.propose({{good, {1.0}}}, {good}).ok());
  json extra = good;
  extra["note"] = "keys outside the space are ignored";
  BOOST_TEST(sampler.propose({{extra, {1.0}}}, {extra}).ok());
  const auto expect_error = [&](const std::vector<TpeObservation>& observations, const std::vector<json>& pending,
                                const std::string& words) {
    auto proposal = sampler.propose(observations, pending);
    BOOST_TEST(!proposal.ok());
    BOOST_TEST(proposal.error().find(words) != std::string::npos, proposal.error());
  };
  json missing = good;
  missing.erase("lr");
  expect_error({{missing, {1.0}}}, {}, "observation 0 has no value for lr");
  json outside = good;
  outside["lr"] = 0.5;
  expect_error({{good, {1.0}}, {outside, {0.0}}}, {}, "observation 1 has lr = 0.5, outside");
  json fractional = good;
  fractional["width"] = 2.5;
  expect_error({}, {fractional}, "pending config 0 has width = 2.5, outside the space's integers");
  json unknown = good;
  unknown["act"] = "swish";
  expect_error({{unknown, {1.0}}}, {}, "not one of the space's values");
  expect_error({{good, {1.0}}, {good, {1.0, 2.0}}}, {}, "observation 1 has 2 scores");
  expect_error({{good, {}}}, {}, "observation 0 has 0 scores");
}

// TPE against random search with the same budget and seed (so both start with
// the same 10 configs): 30 seeds x 40 proposals on mixed_objective, two
// uniform, one log-uniform, one integer and one categorical parameter. Run
// with --log_level=message to see the counts.
BOOST_AUTO_TEST_CASE(tpe_beats_random_on_a_shifted_sphere) {
  const json space = mixed_space();
  int sequential_wins = 0, async_wins = 0;
  double tpe_total = 0, random_total = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const TpeSampler sampler = make_sampler(space, seed);
    const double random = best_random(space, 40, seed);
    const double sequential = best_single(run_tpe(sampler, 40, 1, mixed_objective));
    sequential_wins += sequential > random;
    async_wins += best_single(run_tpe(sampler, 40, 4, mixed_objective)) > random;
    tpe_total += sequential;
    random_total += random;
  }
  BOOST_TEST_MESSAGE("TPE's best beat random's in " << sequential_wins << " of 30 seeds one at a time, " << async_wins
                                                    << " of 30 with 4 in flight (constant liar); mean best "
                                                    << tpe_total / 30 << " against " << random_total / 30
                                                    << " (the optimum is 0)");
  // Measured: 27 of 30 one at a time, 28 of 30 with 4 in flight (27 of 30
  // with 4 in flight when pending configs are ignored, i.e. without the liar).
  BOOST_TEST(sequential_wins >= 22);
  BOOST_TEST(async_wins >= 20);
}

// MOTPE on a ZDT1-like problem (minimize f1 = a and f2 = g (1 - sqrt(a / g)),
// g = 1 + 9 mean(b, c); here both negated to maximize): 20 seeds x 60
// proposals, the hypervolume of the observed Pareto front against random's.
BOOST_AUTO_TEST_CASE(motpe_beats_random_on_two_objectives) {
  const json space = json::parse(R"({
    "a": {"dist": "uniform", "low": 0.0, "high": 1.0},
    "b": {"dist": "uniform", "low": 0.0, "high": 1.0},
    "c": {"dist": "uniform", "low": 0.0, "high": 1.0},
    "kind": ["x", "y", "z"]
  })");
  const auto objectives = [](const json& p) {
    const double a = p.at("a").get<double>();
    const double g = 1 + 9 * (p.at("b").get<double>() + p.at("c").get<double>()) / 2 + (p.at("kind") == "y" ? 0 : 1);
    return std::vector<double>{-a, -g * (1 - std::sqrt(a / g))};
  };
  const std::vector<double> ref = {-1.1, -11.0};
  const auto hypervolume = [&](const std::vector<TpeObservation>& observations) {
    std::vector<std::vector<double>> points;
    for (const auto& o : observations) points.push_back(o.scores);
    return hypervolume_2d(points, ref);
  };
  int wins = 0, async_wins = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::vector<double>> random_points;
    const auto sampled = sample_random(space, 60, seed).value();
    for (const auto& c : sampled) random_points.push_back(objectives(c.params));
    const double random = hypervolume_2d(random_points, ref);
    const TpeSampler sampler = make_sampler(space, seed);
    wins += hypervolume(run_tpe(sampler, 60, 1, objectives)) > random;
    async_wins += hypervolume(run_tpe(sampler, 60, 4, objectives)) > random;
  }
  BOOST_TEST_MESSAGE("MOTPE's hypervolume beat random's in " << wins << " of 20 seeds one at a time, " << async_wins
                                                             << " of 20 with 4 in flight");
  // Measured: 19 of 20 one at a time, 20 of 20 with 4 in flight.
  BOOST_TEST(wins >= 15);
  BOOST_TEST(async_wins >= 15);
}

BOOST_AUTO_TEST_SUITE_END()
