// Config validation (check_params), configs that do not fit the data
// (initial_state), bad states, and a model registered from C++.
#include <boost/test/unit_test.hpp>

#include "models/model.hpp"
#include "models/params.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

const ShapeInfo kImages{{1, 8, 8}, kClasses};
const ShapeInfo kRows{{20}, kClasses};

// The error check_params gives for `params` (empty if it accepts them).
std::string params_error(const char* params, const ShapeInfo& shape = kImages) {
  return check_params(json::parse(params), shape).message();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(params)

BOOST_AUTO_TEST_CASE(valid_configs_pass) {
  BOOST_TEST(params_error(R"({"model": "mlp"})") == "");
  BOOST_TEST(params_error(R"({"model": "mlp", "hidden": [64, 32], "dropout": 0.5, "lr": 0.1, "batch_size": 8,
                              "optimizer": "sgd", "momentum": 0.9, "nesterov": true, "weight_decay": 1e-4})") == "");
  BOOST_TEST(params_error(R"({"model": "mlp", "hidden": 64, "optimizer": "adamw"})") == "");
  BOOST_TEST(params_error(R"({"model": "cnn", "channels": [8, 16], "fc": 32})") == "");
  BOOST_TEST(params_error(R"({"model": "resnet", "width": 8, "blocks": [2, 1]})") == "");
}

BOOST_AUTO_TEST_CASE(unknown_key_is_named) {
  auto e = params_error(R"({"model": "mlp", "hiden": [64]})");
  BOOST_TEST(contains(e, "hiden"), e);
  BOOST_TEST(contains(e, "unknown"), e);
  // A key of another model is unknown to this one.
  e = params_error(R"({"model": "mlp", "channels": [8]})");
  BOOST_TEST(contains(e, "channels"), e);
}

BOOST_AUTO_TEST_CASE(wrong_types_and_values_are_named) {
  auto e = params_error(R"({"model": "mlp", "lr": "x"})");
  BOOST_TEST(contains(e, "lr"), e);
  BOOST_TEST(contains(e, "number"), e);
  e = params_error(R"({"model": "mlp", "lr": -1})");
  BOOST_TEST(contains(e, "lr"), e);
  e = params_error(R"({"model": "mlp", "batch_size": 0})");
  BOOST_TEST(contains(e, "batch_size"), e);
  e = params_error(R"({"model": "mlp", "batch_size": 2.5})");
  BOOST_TEST(contains(e, "batch_size"), e);
  e = params_error(R"({"model": "mlp", "hidden": [64, "x"]})");
  BOOST_TEST(contains(e, "hidden"), e);
  e = params_error(R"({"model": "mlp", "dropout": 1.0})");
  BOOST_TEST(contains(e, "dropout"), e);
  e = params_error(R"({"model": "mlp", "momentum": 0.9, "optimizer": "sgd", "nesterov": "yes"})");
  BOOST_TEST(contains(e, "nesterov"), e);
}

BOOST_AUTO_TEST_CASE(bad_optimizer_and_model_names) {
  auto e = params_error(R"({"model": "mlp", "optimizer": "rmsprop"})");
  BOOST_TEST(contains(e, "optimizer"), e);
  BOOST_TEST(contains(e, "rmsprop"), e);
  e = params_error(R"({"model": "gpt"})");
  BOOST_TEST(contains(e, "unknown model"), e);
  BOOST_TEST(contains(e, "gpt"), e);
  BOOST_TEST(contains(e, "transformer"), e);  // the zoo's language model is among them
  BOOST_TEST(contains(e, "mlp"), e);          // lists what exists
  e = params_error(R"({"lr": 0.1})");
  BOOST_TEST(contains(e, "model"), e);
  e = params_error(R"([1, 2])");
  BOOST_TEST(e != "");
}

BOOST_AUTO_TEST_CASE(optimizer_kinds_round_trip_and_are_read_once) {
  for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw}) {
    BOOST_TEST((parse_optimizer_kind(to_string(kind)) == kind));
  }
  BOOST_TEST(!parse_optimizer_kind("rmsprop").has_value());
  BOOST_TEST(!parse_optimizer_kind("Adam").has_value());
  json params = json::parse(R"({"model": "mlp", "optimizer": "adamw"})");
  ParamReader reader(params);
  const TrainingParams p = TrainingParams::read(reader);
  BOOST_TEST((p.optimizer == OptimizerKind::adamw));
  BOOST_TEST(p.weight_decay == 0.01);  // adamw's default, as in torch
}

BOOST_AUTO_TEST_CASE(nesterov_needs_sgd_with_momentum) {
  auto e = params_error(R"({"model": "mlp", "nesterov": true, "momentum": 0.9})");  // adam
  BOOST_TEST(contains(e, "nesterov"), e);
  BOOST_TEST(contains(e, "sgd"), e);
  e = params_error(R"({"model": "mlp", "nesterov": true, "optimizer": "sgd"})");
  BOOST_TEST(contains(e, "nesterov"), e);
  BOOST_TEST(contains(e, "momentum"), e);
}

// A config that is valid but does not fit the data fails in initial_state,
// with a message; check_params leaves it to that per-config check.
BOOST_AUTO_TEST_CASE(cnn_on_flat_rows_fails_its_config_only) {
  const json cnn = json::parse(R"({"model": "cnn"})");
  BOOST_TEST(check_params(cnn, kRows).ok());
  const auto rows = synthetic({20}, 16, 1);
  auto r = initial_state(cnn, kRows, rows, 7);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "image samples"), r.error());
  BOOST_TEST(contains(r.error(), "[20]"), r.error());

  const json resnet = json::parse(R"({"model": "resnet"})");
  r = initial_state(resnet, kRows, rows, 7);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "image samples"), r.error());

  // Too many pooling stages for a tiny image.
  const json deep = json::parse(R"({"model": "cnn", "channels": [4, 4, 4, 4]})");
  const auto images = synthetic({1, 8, 8}, 16, 1);
  r = initial_state(deep, kImages, images, 7);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "cnn"), r.error());

  // The same mlp fits both.
  const json mlp = json::parse(R"({"model": "mlp", "hidden": [8]})");
  BOOST_TEST(initial_state(mlp, kRows, rows, 7).ok());
  BOOST_TEST(initial_state(mlp, kImages, images, 7).ok());
}

BOOST_AUTO_TEST_CASE(bad_states_are_errors_not_crashes) {
  const json mlp = json::parse(R"({"model": "mlp", "hidden": [8]})");
  const auto images = synthetic({1, 8, 8}, 32, 1);
  auto e = evaluate_state(mlp, kImages, "not a state", images);
  BOOST_TEST(!e.ok());
  const std::string garbage = "not a state";
  auto u = run_unit(mlp, kImages, garbage, images, 1);
  BOOST_TEST(!u.ok());

  // A state of another architecture: wrong tensor shapes.
  const json wider = json::parse(R"({"model": "mlp", "hidden": [16]})");
  auto other = initial_state(wider, kImages, images, 7);
  BOOST_REQUIRE_MESSAGE(other.ok(), other.error());
  e = evaluate_state(mlp, kImages, *other, images);
  BOOST_REQUIRE(!e.ok());
  BOOST_TEST(contains(e.error(), "shape"), e.error());
  // Another number of layers: a different tensor count.
  const json deeper = json::parse(R"({"model": "mlp", "hidden": [8, 8]})");
  e = evaluate_state(deeper, kImages, *other, images);
  BOOST_TEST(!e.ok());
}

// A module registered through the public API of models/model.hpp trains like
// a zoo model, reads its own hyper-parameters and still rejects unknown ones.
BOOST_AUTO_TEST_CASE(registered_module_trains) {
  register_model("test_linear", [](ParamReader& reader, const DataShape& shape) {
    const auto scale = reader.positive_number("init_scale", 1.0);
    int64_t in = 1;
    for (auto d : shape.sample_shape) in *= d;
    torch::nn::Linear linear(in, shape.num_classes);
    {
      torch::NoGradGuard no_grad;
      linear->weight.mul_(scale);
    }
    NativeModule native;
    native.module = linear.ptr();
    native.forward = [linear](const torch::Tensor& x) mutable { return linear->forward(x.flatten(1)); };
    return native;
  });
  const auto names = registered_models();
  BOOST_TEST((std::find(names.begin(), names.end(), "test_linear") != names.end()));

  const json params = json::parse(R"({"model": "test_linear", "init_scale": 0.5, "lr": 0.01})");
  BOOST_TEST(check_params(params, kRows).message() == "");
  auto e = params_error(R"({"model": "test_linear", "init_scale": "big"})", kRows);
  BOOST_TEST(contains(e, "init_scale"), e);
  e = params_error(R"({"model": "test_linear", "hidden": [3]})", kRows);
  BOOST_TEST(contains(e, "hidden"), e);

  const auto train = synthetic({20}, 256, 1), validation = synthetic({20}, 200, 2);
  auto state = initial_state(params, kRows, train, 7);
  BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
  auto before = evaluate_state(params, kRows, *state, validation);
  BOOST_REQUIRE_MESSAGE(before.ok(), before.error());
  std::string s = *state;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    auto u = run_unit(params, kRows, s, train, seed);
    BOOST_REQUIRE_MESSAGE(u.ok(), u.error());
    BOOST_TEST(u->examples == train.size());
    s = u->state;
  }
  auto after = evaluate_state(params, kRows, s, validation);
  BOOST_REQUIRE_MESSAGE(after.ok(), after.error());
  BOOST_TEST(after->loss < before->loss);
  BOOST_TEST(after->accuracy > 0.5);

  // It was registered without an exporter: export says so instead of crashing.
  TempDir dir;
  auto exported = export_model(params, kRows, s, dir.file("linear.pt"));
  BOOST_TEST(!exported.ok());
  BOOST_TEST(contains(exported.message(), "TorchScript"), exported.message());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
