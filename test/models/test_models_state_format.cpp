// The state format of our own (models/state_format.hpp) and the worker's kept
// models (models/trainee_cache.hpp): a state round-trips bit
// for bit, states written before (LibTorch archives) still load and train to
// the same result, a damaged state is refused, and a reused model trains
// exactly as a freshly built one.
#include <boost/test/unit_test.hpp>

#include "models/state_format.hpp"
#include "models/trainee.hpp"
#include "models/trainee_cache.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

struct FormatCase {
  const char* name;
  const char* params;
  std::vector<int64_t> sample_shape;
};

const FormatCase kCases[] = {
    {"mlp adam", R"({"model": "mlp", "hidden": [32], "batch_size": 32})", {1, 8, 8}},
    {"cnn adam with dropout",
     R"({"model": "cnn", "channels": [4, 8], "fc": 16, "dropout": 0.3, "batch_size": 32})",
     {1, 8, 8}},
    {"cnn sgd momentum",
     R"({"model": "cnn", "channels": [4], "fc": 16, "optimizer": "sgd", "lr": 0.05,
        "momentum": 0.9, "batch_size": 16})",
     {1, 8, 8}},
    {"mlp sgd without momentum", R"({"model": "mlp", "hidden": [16], "optimizer": "sgd", "lr": 0.05})", {20}},
    {"resnet adamw (batchnorm buffers)",
     R"({"model": "resnet", "width": 4, "blocks": [1, 1], "optimizer": "adamw", "batch_size": 32})",
     {1, 8, 8}},
    {"mlp sgd nesterov with dropout",
     R"({"model": "mlp", "hidden": [16, 16], "dropout": 0.2, "optimizer": "sgd",
        "lr": 0.05, "momentum": 0.9, "nesterov": true, "batch_size": 16})",
     {20}},
};

UnitOutput must(const Result<UnitOutput>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  return r.value();
}
std::string must(const Result<std::string>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  return r.value();
}

// A unit with the worker's kept models.
UnitOutput cached_unit(TraineeCache& cache, const json& params, const ShapeInfo& shape, const std::string& state,
                       const datasets::Dataset& partition, uint64_t seed,
                       const datasets::Dataset* validation = nullptr) {
  return must(train_unit(unit_input(params, shape, state, partition, seed, validation), cache));
}

// The same state as a LibTorch archive: what save_state wrote before our format.
std::string as_archive(const json& params, const ShapeInfo& shape, const std::string& state) {
  auto t = detail::build(params, shape);
  detail::restore_state(t, state);
  return detail::save_archive_state(t);
}

void check_same(const UnitOutput& a, const UnitOutput& b) {
  BOOST_TEST(a.state == b.state);  // our format is canonical: equal states are equal bytes
  BOOST_TEST(state_difference(a.state, b.state) == "");
  BOOST_TEST(a.train_loss == b.train_loss);
  BOOST_TEST(a.examples == b.examples);
  BOOST_TEST(a.validation.has_value() == b.validation.has_value());
  if (a.validation && b.validation) {
    BOOST_TEST(a.validation->loss == b.validation->loss);
    BOOST_TEST(a.validation->accuracy == b.validation->accuracy);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(state_format)

BOOST_AUTO_TEST_CASE(states_are_written_in_our_format_and_round_trip_bit_for_bit) {
  for (const auto& c : kCases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      const auto data = make_data(c.sample_shape);
      const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
      const auto unit = must(run_unit(params, data.shape, s0, data.p0, 11));
      BOOST_TEST(detail::is_raw_state(s0));
      BOOST_TEST(detail::is_raw_state(unit.state));
      BOOST_TEST(decode_state(s0).parameters_with_optimizer_state == 0);
      const bool stateful = std::string(c.params).find("\"sgd\"") == std::string::npos ||
                            std::string(c.params).find("momentum") != std::string::npos;
      BOOST_TEST((decode_state(unit.state).parameters_with_optimizer_state > 0) == stateful);
      // Restored into a fresh model and saved again: the same bytes.
      auto t = detail::build(params, data.shape);
      detail::restore_state(t, unit.state);
      BOOST_TEST(detail::save_state(t) == unit.state);
    }
  }
}

BOOST_AUTO_TEST_CASE(states_written_before_our_format_still_load_and_train_the_same) {
  for (const auto& c : kCases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      const auto data = make_data(c.sample_shape);
      const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
      const auto first = must(run_unit(params, data.shape, s0, data.p0, 11));
      // The first unit's state as the old binary wrote it (a checkpoint of an earlier run).
      const std::string old = as_archive(params, data.shape, first.state);
      BOOST_TEST(!detail::is_raw_state(old));
      BOOST_TEST(old.substr(0, 2) == "PK");  // a zip: LibTorch's archive
      // Resuming from it gives the result of resuming from our format.
      check_same(must(run_unit(params, data.shape, old, data.p1, 12, &data.validation)),
                 must(run_unit(params, data.shape, first.state, data.p1, 12, &data.validation)));
      auto a = evaluate_state(params, data.shape, old, data.validation);
      auto b = evaluate_state(params, data.shape, first.state, data.validation);
      BOOST_REQUIRE(a.ok() && b.ok());
      BOOST_TEST(a->loss == b->loss);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_damaged_or_mismatched_state_is_refused) {
  const json params = json::parse(kCases[0].params);
  const auto data = make_data(kCases[0].sample_shape);
  const auto unit =
      must(run_unit(params, data.shape, must(initial_state(params, data.shape, data.p0, 7)), data.p0, 11));

  std::string flipped = unit.state;
  flipped[flipped.size() / 2] ^= 0x10;
  auto r = run_unit(params, data.shape, flipped, data.p1, 12);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().find("checksum") != std::string::npos, r.error());

  auto truncated = run_unit(params, data.shape, unit.state.substr(0, unit.state.size() - 9), data.p1, 12);
  BOOST_TEST(!truncated.ok());

  // Another architecture, another optimizer: named, not silently loaded.
  const json wider = json::parse(R"({"model": "mlp", "hidden": [64], "batch_size": 32})");
  auto other_shape = run_unit(wider, data.shape, unit.state, data.p1, 12);
  BOOST_REQUIRE(!other_shape.ok());
  BOOST_TEST(other_shape.error().find("wrong shape") != std::string::npos, other_shape.error());
  const json sgd = json::parse(R"({"model": "mlp", "hidden": [32], "optimizer": "sgd", "lr": 0.1})");
  auto other_optimizer = run_unit(sgd, data.shape, unit.state, data.p1, 12);
  BOOST_REQUIRE(!other_optimizer.ok());
  BOOST_TEST(other_optimizer.error().find("adam optimizer") != std::string::npos, other_optimizer.error());
}

BOOST_AUTO_TEST_CASE(a_reused_model_trains_exactly_as_a_fresh_one) {
  for (const auto& c : kCases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      const auto data = make_data(c.sample_shape);
      const std::string s0 = must(initial_state(params, data.shape, data.p0, 7));
      const auto fresh1 = must(run_unit(params, data.shape, s0, data.p0, 11));
      const auto fresh2 = must(run_unit(params, data.shape, fresh1.state, data.p1, 12, &data.validation));

      TraineeCache cache;
      check_same(cached_unit(cache, params, data.shape, s0, data.p0, 11), fresh1);
      BOOST_TEST(cache.builds() == 1);
      BOOST_TEST(cache.reuses() == 0);
      // The kept model continues with the next unit: the fresh build's result.
      check_same(cached_unit(cache, params, data.shape, fresh1.state, data.p1, 12, &data.validation), fresh2);
      // Back to the initial state (no optimizer state at all): nothing of the
      // units before survives in the kept model or its optimizer.
      check_same(cached_unit(cache, params, data.shape, s0, data.p0, 11), fresh1);
      // A state written before our format, into a kept model.
      check_same(cached_unit(cache, params, data.shape, as_archive(params, data.shape, fresh1.state), data.p1, 12,
                             &data.validation),
                 fresh2);
      BOOST_TEST(cache.builds() == 1);
      BOOST_TEST(cache.reuses() == 3);
      BOOST_TEST(cache.size() == 1u);
    }
  }
}

BOOST_AUTO_TEST_CASE(models_are_kept_per_config_and_a_failed_unit_keeps_none) {
  const auto data = make_data({1, 8, 8});
  const json a = json::parse(R"({"model": "mlp", "hidden": [32], "batch_size": 32})");
  const json b = json::parse(R"({"model": "mlp", "hidden": [32], "batch_size": 32, "lr": 0.01})");
  const std::string sa = must(initial_state(a, data.shape, data.p0, 7)),
                    sb = must(initial_state(b, data.shape, data.p0, 8));
  TraineeCache cache;
  auto a1 = cached_unit(cache, a, data.shape, sa, data.p0, 1);
  auto b1 = cached_unit(cache, b, data.shape, sb, data.p0, 2);
  BOOST_TEST(cache.builds() == 2);  // another lr is another config: its own model
  check_same(cached_unit(cache, a, data.shape, a1.state, data.p1, 3),
             must(run_unit(a, data.shape, a1.state, data.p1, 3)));
  check_same(cached_unit(cache, b, data.shape, b1.state, data.p1, 4),
             must(run_unit(b, data.shape, b1.state, data.p1, 4)));
  BOOST_TEST(cache.reuses() == 2);

  // A damaged state fails its unit and drops the kept model; the next unit builds afresh and is right.
  std::string damaged = a1.state;
  damaged[damaged.size() / 2] ^= 0x01;
  UnitInput in;
  in.params = &a;
  in.shape = data.shape;
  in.state = &damaged;
  in.partition = &data.p1;
  in.seed = 3;
  BOOST_TEST(!train_unit(in, cache).ok());
  BOOST_TEST(cache.size() == 1u);
  check_same(cached_unit(cache, a, data.shape, a1.state, data.p1, 3),
             must(run_unit(a, data.shape, a1.state, data.p1, 3)));
  BOOST_TEST(cache.builds() == 3);

  // A budget too small for any model keeps none (and still trains).
  TraineeCache tiny(16);
  check_same(cached_unit(tiny, a, data.shape, sa, data.p0, 1), a1);
  BOOST_TEST(tiny.size() == 0u);
  BOOST_TEST(is_builtin_model("mlp"));
  BOOST_TEST(!is_builtin_model("my_model.pt"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
