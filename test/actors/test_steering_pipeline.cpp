// Steering: configs added while the run trains are planned like the
// run's own. Through the client API on an embedded cluster of 2 workers (the
// path the REPL and the HTTP API take), a config added with parallelism =
// "pipeline" trains to the end over 2 stages, a clone of it keeps the split
// (from its parent's framed state), and a clone that would change the split
// or a split the model cannot take is refused, naming why. Under a
// `parameters` objective, added configs keep their parameter count for the
// live Pareto front.
#define BOOST_TEST_MODULE steering_pipeline
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <map>

#include "actors/client.hpp"
#include "actors/embedded_cluster.hpp"
#include "actors/system_config.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;

BOOST_AUTO_TEST_CASE(a_pipeline_config_added_mid_run_trains_to_the_end_over_2_stages) {
  // Units take 10 times as long (test-only fault injection), so the run's own
  // config is still training when the pause below arrives, however loaded
  // the machine.
  setenv("CEREBRO_FAULT_INJECTION_ENABLE", "i-am-a-test", 1);
  setenv("CEREBRO_FAULTS", "slow_worker=0:10;slow_worker=1:10", 1);
  TempDir tmp;
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  auto cluster = EmbeddedCluster::start(system, EmbeddedClusterOptions{tmp.file("state"), 2});
  BOOST_REQUIRE_MESSAGE(cluster.ok(), cluster.error());
  std::string experiment;
  {
    Client client(system, cluster->gateway(), cluster->token());
    // Two objectives: added configs join the live Pareto front as the run's own do.
    std::string spec = small_spec("model = [\"mlp\"]\nhidden = [[16]]\n", 2, 400, 2);
    spec.insert(spec.find('\n') + 1, "metric = [\"val_accuracy\", \"parameters\"]\n");
    auto id = client.submit(spec, tmp.path().string(), "steering.toml");
    BOOST_REQUIRE_MESSAGE(id.ok(), id.error());
    experiment = *id;
    // Paused as soon as it trains (the command waits for its setup): the
    // configs below join a run in progress.
    auto paused = client.pause(experiment);
    BOOST_REQUIRE_MESSAGE(paused.ok(), paused.error());

    auto added = client.add(experiment, {"parallelism=pipeline", "stages=2"});
    BOOST_REQUIRE_MESSAGE(added.ok(), added.error());
    BOOST_TEST((*added)["stages"] == 2);
    const ConfigId pipeline = (*added)["config"].get<ConfigId>();
    BOOST_TEST(pipeline == 1);
    auto cloned = client.clone(experiment, pipeline, {"lr=0.05"});
    BOOST_REQUIRE_MESSAGE(cloned.ok(), cloned.error());
    BOOST_TEST((*cloned)["stages"] == 2);
    BOOST_TEST((*cloned)["cloned_from"] == pipeline);

    // A clone that would split its whole parent is refused: it keeps the split.
    auto split_clone = client.clone(experiment, 0, {"parallelism=pipeline"});
    BOOST_REQUIRE(!split_clone.ok());
    BOOST_TEST(split_clone.error().find("config 0 trains whole, but with these settings the clone would train as a "
                                        "pipeline over 2 stages") != std::string::npos,
               split_clone.error());
    // More stages than the model has top-level children: the plan's reason.
    auto too_many = client.add(experiment, {"parallelism=pipeline", "stages=3"});
    BOOST_REQUIRE(!too_many.ok());
    BOOST_TEST(
        too_many.error().find("[space] stages = 3: the model has only 2 top-level children") != std::string::npos,
        too_many.error());

    BOOST_REQUIRE(client.resume(experiment).ok());
    auto done = client.wait(experiment);
    BOOST_REQUIRE_MESSAGE(done.ok(), done.error());
    BOOST_TEST((*done)["status"] == "completed");
  }
  cluster->stop();

  const std::string dir = tmp.file("state") + "/experiments/" + experiment;
  auto store = open_store(dir);
  const auto log = store->unit_log();
  check_complete_run(log, 3, 2, 2);
  for (const auto& e : log) {
    BOOST_TEST_CONTEXT("config " << e.config << " p" << e.partition << " e" << e.epoch) {
      if (e.config == 0) {
        BOOST_TEST(e.pipeline_workers.empty());
        continue;
      }
      BOOST_TEST_REQUIRE(e.pipeline_workers.size() == 2u);
      BOOST_TEST(e.pipeline_workers[0] == e.worker);
      BOOST_TEST(e.pipeline_workers[1] != e.worker);
      BOOST_TEST(trained_as(e).rfind("pipeline over 2 stages (workers ", 0) == 0, trained_as(e));
    }
  }
  // Their splits are durable: a resumed run reads them back.
  auto stages = stored_pipeline_stages(*store);
  BOOST_REQUIRE_MESSAGE(stages.ok(), stages.error());
  BOOST_TEST((*stages == std::map<ConfigId, int32_t>{{1, 2}, {2, 2}}));
  // Their parameter counts are kept as the run's own config's is (the live
  // Pareto front reads them; without one a config never joins it): the same
  // architecture, so the same count.
  for (ConfigId c : {0, 1, 2}) {
    BOOST_TEST_CONTEXT("config " << c) {
      auto parameters = store->get_meta("parameters/" + std::to_string(c));
      BOOST_TEST_REQUIRE(parameters.has_value());
      BOOST_TEST(*parameters == *store->get_meta("parameters/0"));
    }
  }
  auto summary = read_json(dir + "/summary.json");
  BOOST_REQUIRE_EQUAL(summary["configs"].size(), 3u);
  for (const auto& c : summary["configs"]) {
    BOOST_TEST_CONTEXT("config " << c["id"]) {
      BOOST_TEST(c["status"] == "completed");
      if (c["id"] == 0) {
        BOOST_TEST(!c["training"].contains("pipeline"));
      } else {
        BOOST_TEST(c["training"]["pipeline"] == "pipeline over 2 stages");
        BOOST_TEST(c["training"]["pipeline_units"] == 4);
      }
    }
  }
}
