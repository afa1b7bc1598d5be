// Grid expansion, random sampling and config descriptions.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <set>

#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"

using cerebro::ConfigParams;
using cerebro::expand_grid;
using cerebro::sample_random;
using nlohmann::json;

BOOST_AUTO_TEST_SUITE(search_space)

BOOST_AUTO_TEST_CASE(grid_is_the_cartesian_product_with_the_last_sorted_key_fastest) {
  const json space = json::parse(R"({"model": ["mlp", "cnn"], "lr": [0.001, 0.0003],
                                     "batch_size": [64, 256], "optimizer": ["adam"]})");
  auto grid = expand_grid(space);
  BOOST_REQUIRE_MESSAGE(grid.ok(), grid.error());
  BOOST_REQUIRE(grid->size() == 8u);
  // Sorted keys: batch_size, lr, model, optimizer; optimizer varies fastest, then model.
  const std::vector<json> expected = {
      json::parse(R"({"batch_size": 64, "lr": 0.001, "model": "mlp", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 64, "lr": 0.001, "model": "cnn", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 64, "lr": 0.0003, "model": "mlp", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 64, "lr": 0.0003, "model": "cnn", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 256, "lr": 0.001, "model": "mlp", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 256, "lr": 0.001, "model": "cnn", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 256, "lr": 0.0003, "model": "mlp", "optimizer": "adam"})"),
      json::parse(R"({"batch_size": 256, "lr": 0.0003, "model": "cnn", "optimizer": "adam"})")};
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST((*grid)[i].id == static_cast<int32_t>(i));
    BOOST_TEST((*grid)[i].params == expected[i], "config " << i << ": " << (*grid)[i].params.dump());
  }
  BOOST_TEST((*grid)[0].params["batch_size"].is_number_integer());
}

BOOST_AUTO_TEST_CASE(grid_keeps_nested_lists_and_treats_scalars_as_one_value) {
  auto grid = expand_grid(json::parse(R"({"hidden": [[256, 128], [512]], "nesterov": true})"));
  BOOST_REQUIRE_MESSAGE(grid.ok(), grid.error());
  BOOST_REQUIRE(grid->size() == 2u);
  BOOST_TEST((*grid)[0].params == json::parse(R"({"hidden": [256, 128], "nesterov": true})"));
  BOOST_TEST((*grid)[1].params == json::parse(R"({"hidden": [512], "nesterov": true})"));
}

BOOST_AUTO_TEST_CASE(grid_rejects_distributions_empty_spaces_and_huge_products) {
  auto dist = expand_grid(json::parse(R"({"lr": {"dist": "uniform", "low": 0.1, "high": 1.0}})"));
  BOOST_REQUIRE(!dist.ok());
  BOOST_TEST(dist.error().find("[space] lr is a distribution") != std::string::npos);
  BOOST_TEST(!expand_grid(json::object()).ok());
  BOOST_TEST(expand_grid(json::object()).error().find("the search space is empty") != std::string::npos);
  auto empty = expand_grid(json::parse(R"({"lr": []})"));
  BOOST_REQUIRE(!empty.ok());
  BOOST_TEST(empty.error() == "[space] lr is an empty list: give at least one value");
  json big = json::object();
  for (const char* key : {"a", "b", "c", "d", "e", "f"}) big[key] = json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto huge = expand_grid(big);
  BOOST_REQUIRE(!huge.ok());
  BOOST_TEST(huge.error().find("more than 100000 configs") != std::string::npos);
}

const json kRandomSpace = json::parse(R"({
  "lr": {"dist": "loguniform", "low": 1e-5, "high": 1e-1},
  "dropout": {"dist": "uniform", "low": 0.0, "high": 0.5},
  "units": {"dist": "int_uniform", "low": 2, "high": 5},
  "optimizer": {"dist": "choice", "values": ["adam", "sgd", "rmsprop"]},
  "batch_size": [32, 64, 128],
  "model": ["mlp"]
})");

BOOST_AUTO_TEST_CASE(random_sampling_is_deterministic_for_a_seed) {
  auto a = sample_random(kRandomSpace, 20, 7);
  auto b = sample_random(kRandomSpace, 20, 7);
  auto c = sample_random(kRandomSpace, 20, 8);
  BOOST_REQUIRE(a.ok());
  BOOST_REQUIRE(b.ok());
  BOOST_REQUIRE(c.ok());
  BOOST_REQUIRE(a->size() == 20u);
  bool any_difference = false;
  for (size_t i = 0; i < a->size(); ++i) {
    BOOST_TEST((*a)[i].id == static_cast<int32_t>(i));
    BOOST_TEST((*a)[i].params == (*b)[i].params);
    any_difference = any_difference || (*a)[i].params != (*c)[i].params;
  }
  BOOST_TEST(any_difference);
}

BOOST_AUTO_TEST_CASE(random_sampling_matches_the_documented_algorithm) {
  // One mt19937_64(seed) stream; per config, keys in sorted order; a double is
  // the top 53 bits of one draw times 2^-53. Changing this breaks reproducibility
  // of earlier experiments, so it is pinned here.
  const json space = json::parse(R"({"a": {"dist": "uniform", "low": 0.0, "high": 2.0},
                                     "b": {"dist": "uniform", "low": -1.0, "high": 1.0}})");
  auto configs = sample_random(space, 2, 99);
  BOOST_REQUIRE(configs.ok());
  std::mt19937_64 gen(99);
  for (const auto& config : *configs) {
    const double a = 0.0 + static_cast<double>(gen() >> 11) * 0x1.0p-53 * 2.0;
    const double b = -1.0 + static_cast<double>(gen() >> 11) * 0x1.0p-53 * 2.0;
    BOOST_TEST(config.params["a"].get<double>() == a);
    BOOST_TEST(config.params["b"].get<double>() == b);
  }
}

BOOST_AUTO_TEST_CASE(random_samples_stay_within_their_bounds) {
  auto configs = sample_random(kRandomSpace, 2000, 42);
  BOOST_REQUIRE_MESSAGE(configs.ok(), configs.error());
  std::set<int64_t> units_seen;
  std::set<std::string> optimizers_seen;
  std::set<int64_t> batch_seen;
  int lr_below_1e3 = 0;
  for (const auto& config : *configs) {
    const json& p = config.params;
    BOOST_REQUIRE(p.size() == 6u);
    const double lr = p["lr"].get<double>();
    BOOST_TEST((lr >= 1e-5 && lr < 1e-1), "lr " << lr);
    if (lr < 1e-3) ++lr_below_1e3;
    const double dropout = p["dropout"].get<double>();
    BOOST_TEST((dropout >= 0.0 && dropout < 0.5), "dropout " << dropout);
    BOOST_REQUIRE(p["units"].is_number_integer());
    units_seen.insert(p["units"].get<int64_t>());
    optimizers_seen.insert(p["optimizer"].get<std::string>());
    BOOST_REQUIRE(p["batch_size"].is_number_integer());
    batch_seen.insert(p["batch_size"].get<int64_t>());
    BOOST_TEST(p["model"] == "mlp");
  }
  // int_uniform is inclusive at both ends and yields integers only.
  BOOST_TEST((units_seen == std::set<int64_t>{2, 3, 4, 5}));
  BOOST_TEST((optimizers_seen == std::set<std::string>{"adam", "sgd", "rmsprop"}));
  BOOST_TEST((batch_seen == std::set<int64_t>{32, 64, 128}));
  // Log-uniform over 4 decades puts about half the mass below 1e-3 (uniform would put ~1%).
  BOOST_TEST(lr_below_1e3 > 800);
  BOOST_TEST(lr_below_1e3 < 1200);
}

BOOST_AUTO_TEST_CASE(int_uniform_handles_extreme_and_single_point_ranges) {
  const json space = json::parse(R"({"x": {"dist": "int_uniform", "low": -9223372036854775808,
                                           "high": 9223372036854775807},
                                     "y": {"dist": "int_uniform", "low": 3, "high": 3}})");
  auto configs = sample_random(space, 50, 1);
  BOOST_REQUIRE_MESSAGE(configs.ok(), configs.error());
  for (const auto& config : *configs) {
    BOOST_TEST(config.params["x"].is_number_integer());
    BOOST_TEST(config.params["y"] == 3);
  }
}

BOOST_AUTO_TEST_CASE(random_sampling_rejects_bad_input) {
  BOOST_TEST(!sample_random(kRandomSpace, 0, 1).ok());
  auto bad = sample_random(json::parse(R"({"lr": {"dist": "loguniform", "low": -1, "high": 1}})"), 3, 1);
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("loguniform needs low > 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(configs_for_dispatches_on_the_search_kind) {
  cerebro::ExperimentSpec spec;
  spec.space = json::parse(R"({"lr": [0.1, 0.01], "model": ["mlp", "cnn"]})");
  auto grid = cerebro::configs_for(spec);
  BOOST_REQUIRE(grid.ok());
  BOOST_TEST(grid->size() == 4u);
  spec.search = cerebro::SearchKind::random;
  spec.samples = 3;
  spec.seed = 5;
  auto random = cerebro::configs_for(spec);
  BOOST_REQUIRE(random.ok());
  BOOST_TEST(random->size() == 3u);
  auto direct = sample_random(spec.space, 3, 5);
  BOOST_REQUIRE(direct.ok());
  for (size_t i = 0; i < 3; ++i) BOOST_TEST((*random)[i].params == (*direct)[i].params);
}

BOOST_AUTO_TEST_CASE(describe_params_is_short_and_puts_common_keys_first) {
  const json params = json::parse(R"({"batch_size": 64, "dropout": 0.5, "hidden": [256, 128],
                                      "lr": 0.001, "model": "cnn", "nesterov": true})");
  BOOST_TEST(cerebro::describe_params(params) ==
             "model=cnn lr=0.001 batch_size=64 dropout=0.5 hidden=[256,128] nesterov=true");
  BOOST_TEST(cerebro::describe_params(json::parse(R"({"model": "/abs/dir/net.pt"})")) == "model=net.pt");
}

BOOST_AUTO_TEST_SUITE_END()
