// AttachedCluster against real processes: a `cerebro coordinator` and one
// `cerebro agent` on 127.0.0.1, reached from the test's own actor system with
// the same submit/run contract as LocalCluster; and the refusals (a
// registered data source, a used run directory, an unreachable coordinator,
// a wrong token).
#define BOOST_TEST_MODULE embed_attached
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>

#include <caf/io/all.hpp>

#include "actors/client.hpp"
#include "actors/embedding.hpp"
#include "runtime/net/interfaces.hpp"
#include "test/support/cluster_util.hpp"
#include "test/support/e2e_util.hpp"
#include "tools/child_process.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

const char* const token = "s3cret-token-for-tests-0123";  // Cluster's token file holds it

struct ActorSystem {
  static caf::actor_system_config& configured(caf::actor_system_config& config) {
    configure_actor_system(config);  // with the middleman: the coordinator is remote
    return config;
  }
  caf::actor_system_config config;
  caf::actor_system system{configured(config)};
};

// 2 configs x 2 partitions x 2 epochs on 1500 Fashion-MNIST examples.
ExperimentSpec fashion_spec(const std::string& data_path) {
  auto spec = SpecBuilder("attached")
                  .data_source("idx")
                  .set("data", "path", data_path)
                  .limit(1500)
                  .partitions(2)
                  .epochs(2)
                  .seed(5)
                  .workers(1)
                  .space("model", {"mlp"})
                  .space("lr", {1e-3, 3e-3})
                  .space("hidden", {nlohmann::json::array({32})})
                  .build();
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  return *spec;
}

AttachedClusterOptions options_for(int port, const std::string& with_token) {
  AttachedClusterOptions o;
  o.coordinator.host = "127.0.0.1";
  o.coordinator.port = static_cast<uint16_t>(port);
  o.token = with_token;
  o.connect_timeout_s = 10;
  return o;
}

// The done message for `experiment`, after any progress.
experiment_result await_done(caf::scoped_actor& self, const std::string& experiment, int* progress_seen = nullptr) {
  experiment_result result;
  bool waiting = true;
  self->receive_while(waiting)(
      [&](progress_atom, const std::string& id, const progress_update&) {
        BOOST_TEST(id == experiment);
        if (progress_seen) ++*progress_seen;
      },
      [&](done_atom, const std::string& id, const experiment_result& r) {
        BOOST_TEST(id == experiment);
        result = r;
        waiting = false;
      },
      caf::after(std::chrono::seconds(90)) >> [&] { BOOST_FAIL("no result within 90 s"); });
  return result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_attached_cluster_runs_experiments_on_the_coordinators_agents) {
  TempDir tmp;
  Cluster processes(tmp);
  int port = free_port();
  auto& coordinator = processes.start_coordinator(port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("listening on 127.0.0.1:" + std::to_string(port), 20),
                        processes.logs());
  processes.start_agent("node1", port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent node1 joined", 30), processes.logs());

  ActorSystem actors;
  auto wrong = AttachedCluster::connect(actors.system, options_for(port, "not-the-token"));
  BOOST_REQUIRE(!wrong.ok());
  BOOST_TEST(wrong.error().find("wrong token") != std::string::npos, wrong.error());

  auto attached = AttachedCluster::connect(actors.system, options_for(port, token));
  BOOST_REQUIRE_MESSAGE(attached.ok(), attached.error() + processes.logs());
  ExperimentCluster& cluster = **attached;  // the contract LocalCluster has too
  BOOST_TEST((*attached)->where() == "127.0.0.1:" + std::to_string(port));

  caf::scoped_actor self{actors.system};
  auto listener = caf::actor_cast<experiment_listener_actor>(self);  // hears progress and the result
  cluster.submit({fashion_spec(fashion_mnist), "fm-1", tmp.file("run1")}, listener);
  int64_t last_units_done = 0, units_total = 0;
  bool told_where = false;
  experiment_result result;
  bool waiting = true;
  self->receive_while(waiting)(
      [&](progress_atom, const std::string& experiment, const progress_update& p) {
        BOOST_TEST(experiment == "fm-1");
        if (p.event.find("submitted to the coordinator at 127.0.0.1:") != std::string::npos) told_where = true;
        last_units_done = std::max(last_units_done, p.units_done);
        units_total = std::max(units_total, p.units_total);
      },
      [&](done_atom, const std::string& experiment, const experiment_result& r) {
        BOOST_TEST(experiment == "fm-1");
        result = r;
        waiting = false;
      },
      caf::after(std::chrono::seconds(120)) >> [&] { BOOST_FAIL("no result within 120 s"); });
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error + processes.logs());
  BOOST_TEST(told_where);
  BOOST_TEST(units_total == 8);
  BOOST_TEST(last_units_done == 8);
  BOOST_TEST(result.experiment == "fm-1");
  BOOST_TEST(result.run_dir == tmp.file("run1"));
  BOOST_TEST(result.metric == "val_accuracy");
  BOOST_REQUIRE(result.leaderboard.size() == 2u);
  BOOST_TEST(result.leaderboard[0].validated);
  BOOST_TEST(result.leaderboard[0].metric >= result.leaderboard[1].metric);
  BOOST_TEST(result.summary()["best"]["test_accuracy"].get<double>() > 0.5);  // chance is 0.1
  for (const char* name : {"summary.json", "metrics.csv", "best_model.pt", "spec.toml"})
    BOOST_TEST(fs::exists(tmp.path() / "run1" / name), name);

  // The coordinator fails the run (no data there): a failed result, no files.
  auto missing = cluster.run({fashion_spec(tmp.file("no-such-data")), "fm-2", tmp.file("run2")});
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.error().find("fm-2") != std::string::npos, missing.error());
  BOOST_TEST(!fs::exists(tmp.path() / "run2" / "summary.json"));
  cluster.submit({fashion_spec(tmp.file("no-such-data")), "fm-3", tmp.file("run3")}, listener);
  auto failed = await_done(self, "fm-3");
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.run_dir == tmp.file("run3"));

  // Refused before any traffic: a used run directory, a registered source.
  auto used = cluster.run({fashion_spec(fashion_mnist), "fm-4", tmp.file("run1")});
  BOOST_REQUIRE(!used.ok());
  BOOST_TEST(used.error().find("not empty") != std::string::npos, used.error());
  auto registered = datasets::register_dataset_source("mine", []() -> Result<datasets::SourceData> {
    return Status::internal("never called: the request is refused first");
  });
  BOOST_REQUIRE_MESSAGE(registered.ok(), registered.message());
  auto mine = SpecBuilder("mine").data_source("mine").space("model", {"mlp"}).build();
  BOOST_REQUIRE_MESSAGE(mine.ok(), mine.error());
  cluster.submit({*mine, "mine-1", tmp.file("run-mine")}, listener);
  auto refused = await_done(self, "mine-1");
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.error.find("data source 'mine' is not built in") != std::string::npos, refused.error);
  BOOST_TEST(!fs::exists(tmp.path() / "run-mine"));
  datasets::unregister_dataset_source("mine");
}

// The coordinator is published with its interface: a peer that looks it up
// with that interface reaches it, and CAF refuses one expecting another
// interface or none.
BOOST_AUTO_TEST_CASE(a_lookup_with_another_interface_than_the_coordinators_is_refused) {
  TempDir tmp;
  Cluster processes(tmp);
  int port = free_port();
  auto& coordinator = processes.start_coordinator(port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("listening on 127.0.0.1:" + std::to_string(port), 20),
                        processes.logs());
  ActorSystem actors;
  auto& middleman = actors.system.middleman();
  auto typed = find_gateway(actors.system, GatewayAddress{"127.0.0.1", static_cast<uint16_t>(port), false}, 10);
  BOOST_REQUIRE_MESSAGE(typed, (typed ? std::string() : actors.system.render(typed.error())) + processes.logs());
  BOOST_TEST(static_cast<bool>(*typed));
  auto as_shard_server = middleman.remote_actor<shard_server_actor>("127.0.0.1", static_cast<uint16_t>(port));
  BOOST_REQUIRE(!as_shard_server);
  BOOST_TEST((as_shard_server.error() == caf::sec::unexpected_actor_messaging_interface),
             actors.system.render(as_shard_server.error()));
  auto untyped = middleman.remote_actor<caf::actor>("127.0.0.1", static_cast<uint16_t>(port));
  BOOST_REQUIRE(!untyped);
  BOOST_TEST((untyped.error() == caf::sec::unexpected_actor_messaging_interface),
             actors.system.render(untyped.error()));
}

BOOST_AUTO_TEST_CASE(an_unreachable_coordinator_is_an_error_value) {
  ActorSystem actors;
  auto options = options_for(free_port(), token);  // nobody listens there
  options.connect_timeout_s = 1;
  auto start = std::chrono::steady_clock::now();
  auto attached = AttachedCluster::connect(actors.system, options);
  BOOST_REQUIRE(!attached.ok());
  BOOST_TEST(attached.error().find("cannot reach the coordinator at 127.0.0.1:") != std::string::npos,
             attached.error());
  double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(waited_s < 10);  // the timeout bounds the retries
}
