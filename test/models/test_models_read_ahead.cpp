// Out-of-core training sees the same batches: a unit on a memory-mapped partition, with the read-ahead
// (datasets/batch_read_ahead.hpp) and without it, gives bit for bit the state and loss of the same unit on
// the partition held in memory, with dropout and augmentation drawing from the unit's seed; a unit that
// diverges mid-pass stops its reader.
#include <boost/test/unit_test.hpp>

#include "datasets/shard.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

datasets::Dataset mapped_copy(const TempDir& dir, const std::string& name, const datasets::Dataset& data) {
  auto info = datasets::write_shard(dir.file(name), data);
  BOOST_REQUIRE_MESSAGE(info.ok(), info.error());
  auto mapped = datasets::map_shard(dir.file(name), info->checksum);
  BOOST_REQUIRE_MESSAGE(mapped.ok(), mapped.error());
  BOOST_REQUIRE(mapped->is_mapped());
  return std::move(mapped).value();
}

UnitOutput unit_on(const json& params, const ShapeInfo& shape, const std::string& state,
                   const datasets::Dataset& partition, const datasets::Augmentation& augmentation, bool read_ahead) {
  UnitInput in;
  in.params = &params;
  in.shape = shape;
  in.state = &state;
  in.partition = &partition;
  in.seed = 23;
  in.augmentation = augmentation;
  in.read_ahead = read_ahead;
  auto out = train_unit(in);
  BOOST_REQUIRE_MESSAGE(out.ok(), out.error());
  return std::move(out).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(read_ahead)

BOOST_AUTO_TEST_CASE(a_mapped_partition_trains_bit_exact_with_and_without_read_ahead) {
  struct Case {
    const char* name;
    const char* params;
    datasets::Augmentation augmentation;
  };
  const Case cases[] = {
      {"mlp with dropout, a last partial batch",
       R"({"model": "mlp", "hidden": [32], "dropout": 0.3, "batch_size": 32})",
       {}},
      {"cnn with crops and flips", R"({"model": "cnn", "channels": [4], "fc": 16, "batch_size": 16})", {true, 2, true}},
  };
  TempDir dir;
  const auto in_memory = synthetic({1, 8, 8}, 300, 1);
  const auto mapped = mapped_copy(dir, "part.bin", in_memory);
  const auto shape = shape_of(in_memory);
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      auto s0 = initial_state(params, shape, in_memory, 7);
      BOOST_REQUIRE_MESSAGE(s0.ok(), s0.error());
      const auto reference = unit_on(params, shape, *s0, in_memory, c.augmentation, true);
      const auto read_ahead = unit_on(params, shape, *s0, mapped, c.augmentation, true);
      const auto in_thread = unit_on(params, shape, *s0, mapped, c.augmentation, false);
      BOOST_TEST(reference.examples == 300);
      for (const auto* out : {&read_ahead, &in_thread}) {
        BOOST_TEST(out->examples == reference.examples);
        BOOST_TEST(out->train_loss == reference.train_loss);
        BOOST_TEST(state_difference(out->state, reference.state) == "");
      }
      // The comparison can fail: a unit from another starting state ends in another state.
      BOOST_TEST(state_difference(unit_on(params, shape, reference.state, mapped, c.augmentation, true).state,
                                  reference.state) != "");
    }
  }
}

// Structured examples keep their captions and boxes beside the mapped images: a captioning unit draws the
// same caption of each image and a detection unit builds the same box targets as in memory.
BOOST_AUTO_TEST_CASE(a_mapped_partition_of_captions_or_boxes_trains_bit_exact) {
  struct Case {
    const char* name;
    const char* params;
    Data data;
  };
  const Case cases[] = {
      {"captioner", R"({"model": "captioner", "channels": [8], "layers": 1, "d_model": 16, "heads": 2, "ff": 32,
                        "dropout": 0.1, "batch_size": 16})",
       make_caption_data(80)},
      {"detector", R"({"model": "detector", "channels": [8, 16], "head": 16, "batch_size": 16})", make_box_data(80)},
  };
  TempDir dir;
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const json params = json::parse(c.params);
      const auto& in_memory = c.data.p0;
      const auto mapped = mapped_copy(dir, std::string(c.name) + ".bin", in_memory);
      BOOST_REQUIRE_EQUAL(mapped.fields.size(), in_memory.fields.size());
      auto s0 = initial_state(params, c.data.shape, in_memory, 7);
      BOOST_REQUIRE_MESSAGE(s0.ok(), s0.error());
      const auto reference = unit_on(params, c.data.shape, *s0, in_memory, {}, false);
      BOOST_TEST(reference.examples == 80);
      for (bool read_ahead : {true, false}) {
        const auto out = unit_on(params, c.data.shape, *s0, mapped, {}, read_ahead);
        BOOST_TEST(out.train_loss == reference.train_loss);
        BOOST_TEST(state_difference(out.state, reference.state) == "");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_unit_diverging_on_a_mapped_partition_stops_its_read_ahead) {
  const json params =
      json::parse(R"({"model": "mlp", "hidden": [32], "optimizer": "sgd", "lr": 1e6, "batch_size": 4})");
  TempDir dir;
  const auto huge = synthetic({20}, 400, 4, 1e6f);
  const auto mapped = mapped_copy(dir, "huge.bin", huge);
  auto s0 = initial_state(params, shape_of(huge), huge, 7);
  BOOST_REQUIRE_MESSAGE(s0.ok(), s0.error());
  const auto out = unit_on(params, shape_of(huge), *s0, mapped, {}, true);
  BOOST_TEST(out.diverged);
  BOOST_TEST(out.examples < huge.size());  // stopped at the first non-finite loss, the reader joined
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
