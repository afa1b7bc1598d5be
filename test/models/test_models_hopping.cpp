// A hop is invisible: training partition p0 then p1 as two units on two
// threads, with the state passed as a copy of its bytes, gives bit for bit the
// state of doing both units in one thread, and the validation accuracy of a
// plain LibTorch loop that never serializes anything.
// Also: determinism, BatchNorm buffers in the state, divergence detection.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <optional>
#include <thread>

#include "models/trainee.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

struct HopCase {
  const char* name;
  const char* params;
  std::vector<int64_t> sample_shape;
};

const HopCase kHopCases[] = {
    {"mlp adam", R"({"model": "mlp", "hidden": [32], "batch_size": 32})", {1, 8, 8}},
    {"cnn adam with dropout",
     R"({"model": "cnn", "channels": [4, 8], "fc": 16, "dropout": 0.3, "batch_size": 32})",
     {1, 8, 8}},
    {"cnn sgd momentum",
     R"({"model": "cnn", "channels": [4], "fc": 16, "optimizer": "sgd", "lr": 0.05,
        "momentum": 0.9, "batch_size": 16})",
     {1, 8, 8}},
    {"mlp sgd nesterov, flat rows",
     R"({"model": "mlp", "hidden": [16, 16], "dropout": 0.2, "optimizer": "sgd",
        "lr": 0.05, "momentum": 0.9, "nesterov": true, "batch_size": 16})",
     {20}},
    {"resnet adamw",
     R"({"model": "resnet", "width": 4, "blocks": [1, 1], "optimizer": "adamw", "batch_size": 32})",
     {1, 8, 8}},
};

std::string must(const Result<std::string>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  return r.value();
}
UnitOutput must(const Result<UnitOutput>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  return r.value();
}
UnitOutput must(const std::optional<Result<UnitOutput>>& r) {
  BOOST_REQUIRE(r.has_value());
  return must(*r);
}
Evaluation must(const Result<Evaluation>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  return r.value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hopping)

// A search that proposes configs as it goes (tpe) makes a config's initial state while workers build
// the models of their units on other threads: the state must be its seed's all the same, or a replay
// trains another model than the run did.
BOOST_AUTO_TEST_CASE(an_initial_state_is_its_seeds_while_other_threads_build_models) {
  const auto data = make_data({1, 8, 8}, 16);
  const json params = {{"model", "mlp"}, {"hidden", {32}}};
  auto alone = initial_state(params, data.shape, data.p0, 7);
  BOOST_REQUIRE_MESSAGE(alone.ok(), alone.error());
  std::atomic<bool> done{false};
  std::atomic<int> built{0};
  std::thread worker([&] {
    while (!done) {
      detail::build(params, data.shape);
      ++built;
    }
  });
  while (built == 0) std::this_thread::yield();
  int differing = 0;
  for (int i = 0; i < 200; ++i) {
    auto again = initial_state(params, data.shape, data.p0, 7);
    BOOST_REQUIRE_MESSAGE(again.ok(), again.error());
    differing += *again != *alone;
  }
  done = true;
  worker.join();
  BOOST_TEST(differing == 0);
}

BOOST_AUTO_TEST_CASE(two_workers_give_the_state_of_one) {
  for (const auto& c : kHopCases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      const auto data = make_data(c.sample_shape);
      const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));

      // A: both units on one thread. B: p0 on a second thread, concurrently
      // with A (dropout and batch order must not draw from shared generators).
      std::optional<Result<UnitOutput>> a1, a2, b1, b2;
      std::thread worker_a([&] {
        a1.emplace(run_unit(params, data.shape, s0, data.p0, 11));
        if (a1->ok()) a2.emplace(run_unit(params, data.shape, (*a1)->state, data.p1, 12, &data.validation));
      });
      std::thread worker_b([&] { b1.emplace(run_unit(params, data.shape, s0, data.p0, 11)); });
      worker_a.join();
      worker_b.join();
      const auto B1 = must(b1);
      // The hop: B's state leaves its worker as bytes and lands in a third one.
      const std::string hopped(B1.state.data(), B1.state.size());
      std::thread worker_c([&] { b2.emplace(run_unit(params, data.shape, hopped, data.p1, 12, &data.validation)); });
      worker_c.join();

      const auto A1 = must(a1), A2 = must(a2), B2 = must(b2);
      BOOST_TEST(A1.examples == data.p0.size());
      BOOST_TEST(A2.examples == data.p1.size());
      BOOST_TEST(!A2.diverged);
      BOOST_TEST(state_difference(A1.state, B1.state) == "");
      BOOST_TEST(A1.train_loss == B1.train_loss);
      BOOST_TEST(state_difference(A2.state, B2.state) == "");
      BOOST_TEST(A2.train_loss == B2.train_loss);
      BOOST_REQUIRE(A2.validation && B2.validation);
      BOOST_TEST(A2.validation->loss == B2.validation->loss);
      BOOST_TEST(A2.validation->accuracy == B2.validation->accuracy);
      auto eval_a = must(evaluate_state(params, data.shape, A2.state, data.validation));
      auto eval_b = must(evaluate_state(params, data.shape, B2.state, data.validation));
      BOOST_TEST(eval_a.loss == eval_b.loss);
      BOOST_TEST(eval_a.accuracy == eval_b.accuracy);
      BOOST_TEST(eval_a.examples == data.validation.size());
      // evaluate_state sees the same model the unit validated.
      BOOST_TEST(eval_a.loss == A2.validation->loss);

      // The second unit really continues from the first: starting it from
      // the first unit's input state instead gives another result.
      auto skipped = must(run_unit(params, data.shape, s0, data.p1, 12));
      BOOST_TEST(skipped.train_loss != A2.train_loss);
      BOOST_TEST(state_difference(skipped.state, A2.state) != "");
    }
  }
}

BOOST_AUTO_TEST_CASE(optimizer_state_travels_with_the_model) {
  const json params = json::parse(R"({"model": "mlp", "hidden": [32], "batch_size": 32})");
  const auto data = make_data({1, 8, 8});
  const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
  auto before = decode_state(s0);
  BOOST_TEST(before.parameters == 4);  // two Linear layers: weight + bias each
  BOOST_TEST(before.parameters_with_optimizer_state == 0);

  auto s1 = must(run_unit(params, data.shape, s0, data.p0, 11)).state;
  auto after = decode_state(s1);
  BOOST_TEST(after.parameters_with_optimizer_state == 4);
  int model_tensors = 0;
  for (const auto& [name, tensor] : after.tensors) model_tensors += name.rfind("model/", 0) == 0;
  BOOST_TEST(model_tensors >= 4);  // the weights are decoded too, not only the optimizer
  // Adam's moments are in the state, and they are not zero after a unit.
  int moments = 0;
  for (const auto& [name, tensor] : after.tensors)
    if (name.find("exp_avg") != std::string::npos) {
      ++moments;
      BOOST_TEST_CONTEXT(name) { BOOST_TEST(tensor.abs().sum().item<double>() > 0); }
    }
  BOOST_TEST(moments == 8);  // exp_avg and exp_avg_sq per parameter
}

// The plain LibTorch loop (reference_training) trains one model and one
// optimizer over three epochs in one process; hopping after each epoch gives
// the same model, so the same validation accuracy. A hop that lost the
// optimizer state (Adam's moments, SGD's momentum) would not.
BOOST_AUTO_TEST_CASE(hopped_training_equals_the_plain_loop) {
  const char* configs[] = {
      R"({"model": "mlp", "hidden": [32], "dropout": 0.2, "batch_size": 16})",
      R"({"model": "cnn", "channels": [4], "fc": 16, "optimizer": "sgd", "lr": 0.05, "momentum": 0.9,
         "batch_size": 16})",
  };
  const auto data = make_data({1, 8, 8}, 256);
  const uint64_t seed = 42;
  const int epochs = 3;
  for (const char* config : configs) {
    BOOST_TEST_CONTEXT(config) {
      const json params = json::parse(config);
      auto reference = reference_training(params, data.shape, data.p0, data.validation, epochs, seed);
      BOOST_REQUIRE_MESSAGE(reference.ok(), reference.error());
      BOOST_TEST(reference->seconds > 0);
      BOOST_TEST(reference->final_val_accuracy >= 0.0);
      BOOST_TEST(reference->final_val_accuracy <= 1.0);
      BOOST_TEST(reference->final_val_accuracy > 0.5);  // the classes are learnable (chance is 0.1)

      // reference_training seeds epoch e's batch order with seed + 1 + e.
      std::string state = must(initial_state(params, data.shape, data.p0, seed));
      UnitOutput last;
      for (int e = 0; e < epochs; ++e) {
        last =
            must(run_unit(params, data.shape, state, data.p0, seed + 1 + static_cast<uint64_t>(e), &data.validation));
        state = last.state;
      }
      BOOST_REQUIRE(last.validation);
      BOOST_TEST(last.validation->accuracy == reference->final_val_accuracy);
    }
  }
}

BOOST_AUTO_TEST_CASE(same_inputs_same_state_and_seeds_matter) {
  const json params = json::parse(R"({"model": "cnn", "channels": [4], "fc": 16, "dropout": 0.2, "batch_size": 32})");
  const auto data = make_data({1, 8, 8});
  const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
  BOOST_TEST(state_difference(s0, must(initial_state(params, data.shape, data.p0, 7))) == "");
  BOOST_TEST(state_difference(s0, must(initial_state(params, data.shape, data.p0, 8))) != "");

  auto run = [&](uint64_t seed) { return must(run_unit(params, data.shape, s0, data.p0, seed)); };
  auto first = run(5), again = run(5), other = run(6);
  BOOST_TEST(state_difference(first.state, again.state) == "");
  BOOST_TEST(first.train_loss == again.train_loss);
  BOOST_TEST(state_difference(first.state, other.state) != "");
  BOOST_TEST(first.train_loss != other.train_loss);
}

// With lr = 1e-30 an SGD step cannot move a weight of ordinary size, so any
// change in what the model computes in eval mode comes from the BatchNorm
// running statistics: they are part of the state a unit returns.
BOOST_AUTO_TEST_CASE(resnet_batchnorm_statistics_are_in_the_state) {
  const json params =
      json::parse(R"({"model": "resnet", "width": 4, "blocks": [1, 1], "optimizer": "sgd", "lr": 1e-30})");
  const auto data = make_data({1, 8, 8});
  const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
  auto unit = must(run_unit(params, data.shape, s0, data.p0, 11));
  BOOST_TEST(unit.examples == data.p0.size());
  auto before = must(evaluate_state(params, data.shape, s0, data.validation));
  auto after = must(evaluate_state(params, data.shape, unit.state, data.validation));
  BOOST_TEST(std::abs(after.loss - before.loss) > 1e-3);

  // A resnet with a real learning rate trains.
  const json adam = json::parse(R"({"model": "resnet", "width": 4, "blocks": [1, 1], "lr": 0.01})");
  std::string state = must(initial_state(adam, data.shape, data.p0, 7));
  auto untrained = must(evaluate_state(adam, data.shape, state, data.validation));
  for (uint64_t unit_seed = 0; unit_seed < 3; ++unit_seed)
    state = must(run_unit(adam, data.shape, state, data.p0, unit_seed)).state;
  auto trained = must(evaluate_state(adam, data.shape, state, data.validation));
  BOOST_TEST(trained.loss < untrained.loss);
}

BOOST_AUTO_TEST_CASE(huge_inputs_and_learning_rate_diverge) {
  const json params =
      json::parse(R"({"model": "mlp", "hidden": [32], "optimizer": "sgd", "lr": 1e6, "batch_size": 16})");
  const auto data = make_data({20});
  const auto huge = synthetic({20}, 128, 4, 1e6f);
  const std::string s0 = must(initial_state(params, data.shape, huge, 7));
  auto r = run_unit(params, data.shape, s0, huge, 11, &data.validation);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  BOOST_TEST(r->diverged);
  BOOST_TEST(r->examples < huge.size());  // stopped at the first non-finite loss
  BOOST_TEST(!r->validation.has_value());
  BOOST_TEST(!r->state.empty());

  // The same config on ordinary inputs does not report divergence falsely.
  const json sane = json::parse(R"({"model": "mlp", "hidden": [32], "optimizer": "sgd", "lr": 0.01})");
  auto ok = run_unit(sane, data.shape, must(initial_state(sane, data.shape, data.p0, 7)), data.p0, 11);
  BOOST_REQUIRE_MESSAGE(ok.ok(), ok.error());
  BOOST_TEST(!ok->diverged);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
