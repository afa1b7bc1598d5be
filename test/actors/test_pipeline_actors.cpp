// Pipeline stages as actors: a unit trained through two stage
// actors, its activations and gradients travelling as typed messages, ends
// bit for bit where the in-process pipeline (models::train_pipeline_unit)
// ends, in one actor system and across two actor systems talking over
// loopback TCP (every message serialised by CAF's middleman); a stage that is
// gone fails the unit without a state.
#define BOOST_TEST_MODULE pipeline
#include <boost/test/unit_test.hpp>

#include <caf/io/all.hpp>

#include "actors/embedding.hpp"
#include "actors/pipeline_stage.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro {
namespace {

using models::testing::Data;
using models::testing::make_data;
using models::testing::state_difference;
using nlohmann::json;

const json kParams = {{"model", "mlp"}, {"hidden", {32, 16}},        {"batch_size", 16},
                      {"lr", 0.01},     {"parallelism", "pipeline"}, {"micro_batches", 4}};

struct ActorSystem {
  explicit ActorSystem(bool middleman) : system(configured(config, middleman)) {}
  static caf::actor_system_config& configured(caf::actor_system_config& config, bool middleman) {
    configure_actor_system(config, middleman);
    return config;
  }
  caf::actor_system_config config;
  caf::actor_system system;
};

// The in-process pipeline's unit from `state`: what the actors must match.
models::UnitOutput reference_unit(const Data& d, const std::string& state, uint64_t seed) {
  models::UnitInput in;
  in.params = &kParams;
  in.shape = d.shape;
  in.state = &state;
  in.partition = &d.p0;
  in.seed = seed;
  auto out = models::train_pipeline_unit(in);
  BOOST_TEST_REQUIRE(out.ok(), out.error());
  return std::move(out).value();
}

pipeline_stage_actor spawn_stage(caf::actor_system& system, const Data& d, const std::vector<std::string>& parts,
                                 int index, uint64_t seed) {
  auto stage = spawn_pipeline_stage(system, stage_setup{kParams, d.shape, 2, index, parts.at(index), seed});
  BOOST_TEST_REQUIRE(stage.ok(), stage.error());
  return *stage;
}

void expect_same_unit(const pipeline_unit_result& got, const models::UnitOutput& expected) {
  BOOST_TEST(!got.diverged);
  BOOST_TEST(got.examples == expected.examples);
  BOOST_TEST(got.train_loss == expected.train_loss);
  auto a = unpack_stage_states(got.state), b = unpack_stage_states(expected.state);
  BOOST_TEST_REQUIRE(a.ok(), a.error());
  BOOST_TEST_REQUIRE(b.ok(), b.error());
  BOOST_TEST_REQUIRE(a->size() == 2u);
  for (size_t s = 0; s < 2; ++s) BOOST_TEST(state_difference((*a)[s], (*b)[s]) == "", "stage " << s);
}

BOOST_AUTO_TEST_CASE(a_unit_through_stage_actors_matches_the_in_process_pipeline) {
  Data d = make_data({1, 8, 8}, 96);
  auto initial = models::initial_pipeline_state(kParams, d.shape, 2, 9);
  BOOST_TEST_REQUIRE(initial.ok(), initial.error());
  auto parts = unpack_stage_states(*initial);
  BOOST_TEST_REQUIRE(parts.ok());
  const auto expected = reference_unit(d, *initial, 21);

  ActorSystem local(false);
  std::vector<pipeline_stage_actor> stages = {spawn_stage(local.system, d, *parts, 0, 21),
                                              spawn_stage(local.system, d, *parts, 1, 21)};
  auto got = train_unit_through_stages(local.system, stages, kParams, d.shape, d.p0, 21, 60);
  BOOST_TEST_REQUIRE(got.ok(), got.error());
  expect_same_unit(*got, expected);

  // A stage that is gone fails the whole unit: an error, never a state.
  caf::anon_send_exit(stages[1], caf::exit_reason::user_shutdown);
  auto failed = train_unit_through_stages(local.system, stages, kParams, d.shape, d.p0, 21, 60);
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.error().find("pipeline unit") == 0, failed.error());
  caf::anon_send_exit(stages[0], caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(stages_in_two_actor_systems_talk_over_loopback) {
  Data d = make_data({1, 8, 8}, 96);
  auto initial = models::initial_pipeline_state(kParams, d.shape, 2, 9);
  BOOST_TEST_REQUIRE(initial.ok(), initial.error());
  auto parts = unpack_stage_states(*initial);
  BOOST_TEST_REQUIRE(parts.ok());
  const auto expected = reference_unit(d, *initial, 21);

  ActorSystem host(true), driver(true);
  // The last stage lives in the host system, published on an ephemeral port.
  pipeline_stage_actor last = spawn_stage(host.system, d, *parts, 1, 21);
  auto port = host.system.middleman().publish(last, 0, "127.0.0.1");
  BOOST_TEST_REQUIRE(static_cast<bool>(port), (port ? "" : host.system.render(port.error())));
  auto remote = driver.system.middleman().remote_actor<pipeline_stage_actor>("127.0.0.1", *port);
  BOOST_TEST_REQUIRE(static_cast<bool>(remote), (remote ? "" : driver.system.render(remote.error())));
  pipeline_stage_actor first = spawn_stage(driver.system, d, *parts, 0, 21);
  auto got = train_unit_through_stages(driver.system, {first, *remote}, kParams, d.shape, d.p0, 21, 60);
  BOOST_TEST_REQUIRE(got.ok(), got.error());
  expect_same_unit(*got, expected);

  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  host.system.middleman().unpublish(last, *port);
  caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
}

// The zoo's models with dropout, big enough that LibTorch's kernels split
// their work over threads: the stage actors (each stage in its own thread,
// its dropout drawing from its own stream) end where the in-process pipeline
// ends. Before the fix, the in-process pipeline's stages shared one dropout
// whose generator the last stage's replaced (the cnn and the mlp of
// `cerebro pipeline-probe` did not match).
BOOST_AUTO_TEST_CASE(zoo_models_with_dropout_through_stage_actors_match_the_in_process_pipeline) {
  const std::vector<json> configs = {
      {{"model", "cnn"},
       {"dropout", 0.3},
       {"batch_size", 64},
       {"lr", 0.01},
       {"parallelism", "pipeline"},
       {"stages", 2},
       {"micro_batches", 4}},
      {{"model", "mlp"},
       {"hidden", {256, 256, 128}},
       {"dropout", 0.3},
       {"batch_size", 64},
       {"lr", 0.01},
       {"parallelism", "pipeline"},
       {"stages", 3},
       {"micro_batches", 4}},
  };
  Data d = make_data({1, 28, 28}, 256);
  ActorSystem local(false);
  for (const json& params : configs) {
    BOOST_TEST_CONTEXT(params.dump()) {
      const int k = params.at("stages").get<int>();
      auto initial = models::initial_pipeline_state(params, d.shape, k, 9);
      BOOST_TEST_REQUIRE(initial.ok(), initial.error());
      auto parts = unpack_stage_states(*initial);
      BOOST_TEST_REQUIRE(parts.ok());
      models::UnitInput in;
      in.params = &params;
      in.shape = d.shape;
      in.state = &*initial;
      in.partition = &d.p0;
      in.seed = 21;
      auto expected = models::train_pipeline_unit(in);
      BOOST_TEST_REQUIRE(expected.ok(), expected.error());
      std::vector<pipeline_stage_actor> stages;
      for (int s = 0; s < k; ++s) {
        auto stage = spawn_pipeline_stage(local.system, stage_setup{params, d.shape, k, s, parts->at(s), 21});
        BOOST_TEST_REQUIRE(stage.ok(), stage.error());
        stages.push_back(*stage);
      }
      auto got = train_unit_through_stages(local.system, stages, params, d.shape, d.p0, 21, 60);
      for (auto& stage : stages) caf::anon_send_exit(stage, caf::exit_reason::user_shutdown);
      BOOST_TEST_REQUIRE(got.ok(), got.error());
      BOOST_TEST(got->examples == expected->examples);
      BOOST_TEST(got->train_loss == expected->train_loss);
      auto a = unpack_stage_states(got->state), b = unpack_stage_states(expected->state);
      BOOST_TEST_REQUIRE(a.ok(), a.error());
      BOOST_TEST_REQUIRE(b.ok(), b.error());
      BOOST_TEST_REQUIRE(a->size() == static_cast<size_t>(k));
      for (int s = 0; s < k; ++s) BOOST_TEST(state_difference((*a)[s], (*b)[s]) == "", "stage " << s);
    }
  }
}

}  // namespace
}  // namespace cerebro
