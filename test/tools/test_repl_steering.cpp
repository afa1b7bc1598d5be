// Human in the loop, through the client API on an embedded cluster (the
// same gateway the REPL talks to): on a small Fashion-MNIST run, a config
// added mid-run completes all its epochs, a stopped config stops, and a
// clone starts from its parent's weights: its first epoch's training loss is
// close to the parent's latest and far below a fresh config's.
#define BOOST_TEST_MODULE repl_steering
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "actors/client.hpp"
#include "actors/embedded_cluster.hpp"
#include "actors/system_config.hpp"
#include "test/support/e2e_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;

namespace {

// Polls until config `config` has `epochs` validated epochs (or 120 s pass).
nlohmann::json wait_for_epochs(Client& client, const std::string& experiment, ConfigId config, size_t epochs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    auto shown = client.show(experiment, config);
    BOOST_REQUIRE_MESSAGE(shown.ok(), shown.error());
    if ((*shown)["epochs"].size() >= epochs || std::chrono::steady_clock::now() > deadline) return *shown;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Polls until no worker runs a unit of `experiment` (it is paused, so none
// starts again), or 120 s pass.
void wait_until_no_unit_runs(Client& client, const std::string& experiment) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    auto status = client.status();
    BOOST_REQUIRE_MESSAGE(status.ok(), status.error());
    bool running = false;
    for (const auto& agent : (*status)["agents"])
      for (const auto& unit : agent["running"])
        if (unit.get<std::string>().rfind(experiment + ":", 0) == 0) running = true;
    if (!running || std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

double train_loss(const nlohmann::json& shown, size_t epoch) {
  return shown["epochs"].at(epoch)["train_loss"].get<double>();
}

}  // namespace

BOOST_AUTO_TEST_CASE(add_stop_and_clone_mid_run) {
  // Both workers' units take 10 times as long (test-only fault injection, read
  // when the first unit runs): between config 0's second epoch and the pause
  // below config 1 has a few units to go, and unslowed they can end before
  // the pause arrives on a loaded machine (then it cannot be stopped).
  setenv("CEREBRO_FAULT_INJECTION_ENABLE", "i-am-a-test", 1);
  setenv("CEREBRO_FAULTS", "slow_worker=0:10;slow_worker=1:10", 1);
  TempDir tmp;
  cerebro_system_config config(system_role::embedded);
  caf::actor_system system(config);
  auto cluster = EmbeddedCluster::start(system, EmbeddedClusterOptions{tmp.file("state"), 2});
  BOOST_REQUIRE_MESSAGE(cluster.ok(), cluster.error());
  {
    Client client(system, cluster->gateway(), cluster->token());
    const int epochs = 4;
    auto spec = small_spec("model = [\"mlp\"]\nhidden = [[64]]\nlr = [0.002, 0.001]\n", epochs, 3000, 2);
    auto id = client.submit(spec, tmp.path().string(), "steering.toml");
    BOOST_REQUIRE_MESSAGE(id.ok(), id.error());

    // Config 0 ends two epochs; then the person steps in, with the experiment paused.
    wait_for_epochs(client, *id, 0, 2);
    auto paused = client.pause(*id);
    BOOST_REQUIRE_MESSAGE(paused.ok(), paused.error());
    wait_until_no_unit_runs(client, *id);  // running units finish
    auto parent = client.show(*id, 0);
    BOOST_REQUIRE(parent.ok());
    const double parent_loss = train_loss(*parent, (*parent)["epochs"].size() - 1);

    auto before_stop = client.show(*id, 1);
    BOOST_REQUIRE(before_stop.ok());
    auto stopped = client.stop(*id, 1);
    BOOST_REQUIRE_MESSAGE(stopped.ok(), stopped.error());
    auto again = client.stop(*id, 1);
    BOOST_TEST(!again.ok(), "a stopped config cannot be stopped again");

    auto added = client.add(*id, {"lr=0.002"});  // config 0's parameters, fresh weights
    BOOST_REQUIRE_MESSAGE(added.ok(), added.error());
    auto cloned = client.clone(*id, 0, {"lr=0.001"});
    BOOST_REQUIRE_MESSAGE(cloned.ok(), cloned.error());
    auto misfit = client.clone(*id, 0, {"hidden=[8]"});
    BOOST_TEST(!misfit.ok(), "a clone cannot change the model's layers");
    const ConfigId fresh_id = (*added)["config"].get<int>();
    const ConfigId clone_id = (*cloned)["config"].get<int>();
    BOOST_TEST(fresh_id == 2);
    BOOST_TEST(clone_id == 3);
    BOOST_TEST((*cloned)["params"]["lr"] == 0.001);
    BOOST_REQUIRE(client.resume(*id).ok());

    auto done = client.wait(*id);
    BOOST_REQUIRE_MESSAGE(done.ok(), done.error());
    BOOST_TEST((*done)["status"] == "completed");

    auto fresh = client.show(*id, fresh_id);
    auto clone = client.show(*id, clone_id);
    auto stopped_config = client.show(*id, 1);
    BOOST_REQUIRE(fresh.ok() && clone.ok() && stopped_config.ok());
    // The added and the cloned config trained every epoch.
    BOOST_TEST((*fresh)["epochs"].size() == static_cast<size_t>(epochs));
    BOOST_TEST((*fresh)["status"] == "completed");
    BOOST_TEST((*clone)["epochs"].size() == static_cast<size_t>(epochs));
    BOOST_TEST((*clone)["actions"].at(0)["cloned_from"] == 0);
    // The stopped config ended at most the epoch it was in.
    BOOST_TEST((*stopped_config)["status"] == "stopped");
    BOOST_TEST((*stopped_config)["epochs"].size() <= (*before_stop)["epochs"].size() + 1);
    BOOST_TEST((*stopped_config)["epochs"].size() < static_cast<size_t>(epochs));
    // The clone went on from the parent's weights: its first epoch is about
    // where the parent was, far below a fresh start.
    const double clone_loss = train_loss(*clone, 0);
    const double fresh_loss = train_loss(*fresh, 0);
    BOOST_TEST_MESSAGE("parent latest " << parent_loss << ", clone epoch 0 " << clone_loss << ", fresh epoch 0 "
                                        << fresh_loss);
    BOOST_TEST(std::abs(clone_loss - parent_loss) < 0.5 * parent_loss);
    BOOST_TEST(clone_loss < 0.75 * fresh_loss);

    auto board = client.top(*id, 2);
    BOOST_REQUIRE(board.ok());
    BOOST_TEST((*board)["rows"].size() == 2u);
    BOOST_TEST((*board)["configs"] == 4);
  }
  cluster->stop();
}
