// The fault matrix, cluster cases: a coordinator and three agent processes on
// 127.0.0.1 run a small experiment while processes are killed, hung or
// crashed; every case must finish with MOP's invariants intact in the
// committed unit log and no committed unit run twice.
#define BOOST_TEST_MODULE faults_cluster
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "test/support/cluster_util.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;
namespace fs = std::filesystem;

namespace {

constexpr int kConfigs = 4;
constexpr int kEpochs = 3;
constexpr int kPartitions = 3;
constexpr int kUnits = kConfigs * kEpochs * kPartitions;

std::string spec(const TempDir& tmp, int replication, const std::string& extra_cluster = "") {
  return tmp.write("faults.toml", "[experiment]\nname = \"faults\"\nepochs = " + std::to_string(kEpochs) +
                                      "\nseed = 3\n[data]\nsource = \"idx\"\npath = \"" + std::string(fashion_mnist) +
                                      "\"\nlimit = 9000\npartitions = " + std::to_string(kPartitions) +
                                      "\n[cluster]\nreplication = " + std::to_string(replication) + "\n" +
                                      extra_cluster +
                                      "[space]\nmodel = [\"mlp\"]\nlr = [1e-3, 2e-3, 3e-3, 5e-3]\nhidden = [[64]]\n");
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string experiment_dir(const TempDir& tmp) { return e2e::experiment_dir(tmp.file("state")); }

struct Fixture {
  TempDir tmp;
  Cluster cluster{tmp};
  int port = free_port();
  std::unique_ptr<ChildProcess> client;
  std::chrono::steady_clock::time_point submitted;

  void start(std::vector<std::string> coordinator_flags = {}, std::vector<std::string> env = {},
             std::vector<std::string> agent_env = {}) {
    cluster.start_coordinator(port, coordinator_flags, env);
    BOOST_REQUIRE_MESSAGE(cluster.coordinator->wait_for_log("listening on", 20), cluster.logs());
    for (const char* name : {"node1", "node2", "node3"}) cluster.start_agent(name, port, agent_env);
    cluster.wait_joined({"node1", "node2", "node3"});
  }
  void submit(const std::string& spec_path) {
    submitted = std::chrono::steady_clock::now();
    client = std::make_unique<ChildProcess>(
        std::vector<std::string>{cerebro_binary(), "run", spec_path, "--cluster", "127.0.0.1:" + std::to_string(port),
                                 "--token-file", cluster.token, "--out", tmp.file("client-run")},
        tmp.file("client.log"));
  }
  ChildProcess& agent(int n) { return *cluster.agents.at(static_cast<size_t>(n - 1)); }
  std::string logs() const { return (client ? "--- client\n" + client->log() : "") + cluster.logs(); }
  // The client received the run files; the committed log is complete.
  std::vector<UnitLogEntry> finish() {
    int exit_code = client->wait_exit(300);
    BOOST_REQUIRE_MESSAGE(exit_code == 0, "client exit code " << exit_code << "\n" << logs());
    // The figures docs/RELIABILITY.md tabulates (run with --log_level=message).
    auto wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
    BOOST_TEST_MESSAGE("fault-matrix: " << boost::unit_test::framework::current_test_case().p_name
                                        << " client_wall_s=" << wall
                                        << " units_requeued=" << count_of(client->log(), "goes back to the queue"));
    BOOST_TEST(fs::exists(tmp.file("client-run") + "/summary.json"));
    auto summary = read_json(tmp.file("client-run") + "/summary.json");
    BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.6);
    auto log = open_store(experiment_dir(tmp))->unit_log();
    check_complete_run(log, kConfigs, kPartitions, kEpochs);
    return log;
  }
};

}  // namespace

// The reference for the fault cases' extra wall time.
BOOST_AUTO_TEST_CASE(fault_free_baseline) {
  Fixture f;
  f.start();
  f.submit(spec(f.tmp, 2));
  f.finish();
}

// While an experiment runs, `cerebro status` shows what each agent's worker
// runs and the epochs. The workers are slowed (each agent's worker 0, 10x):
// at 4x a fast VM trained this experiment's 36 units in 1.3 s (see the test
// below), less than starting `cerebro status` a few times.
BOOST_AUTO_TEST_CASE(status_shows_what_each_agents_worker_runs) {
  Fixture f;
  f.start({}, {}, {"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=slow_worker=0:10"});
  f.submit(spec(f.tmp, 2));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 3, 180), f.logs());
  Output status;
  for (int attempt = 0; attempt < 50; ++attempt) {  // a moment between units shows nothing running
    status = run_cerebro("status --cluster 127.0.0.1:" + std::to_string(f.port) + " --token-file " + f.cluster.token);
    if (status.text.find("running faults-") != std::string::npos) break;
    if (status.text.find("completed") != std::string::npos) break;  // too late: fails below
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_TEST(status.exit_code == 0);
  BOOST_TEST(status.text.find("running faults-") != std::string::npos, status.text);
  BOOST_TEST(status.text.find("/ partition ") != std::string::npos, status.text);
  BOOST_TEST(status.text.find(" epoch") != std::string::npos, status.text);
  f.finish();
}

BOOST_AUTO_TEST_CASE(an_agent_killed_mid_unit_has_its_units_requeued_on_replicas) {
  Fixture f;
  f.start();
  f.submit(spec(f.tmp, 2));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 6, 180), f.logs());
  f.agent(2).kill_now();
  f.finish();
  BOOST_TEST(f.cluster.coordinator->log().find("agent node2 left") != std::string::npos, f.logs());
}

// A worker actor that dies on a remote node is replaced by that node's agent:
// the runner asks the agent across the network and gets the new worker's
// (typed) handle back, which then takes units.
BOOST_AUTO_TEST_CASE(a_worker_that_dies_on_a_remote_agent_is_respawned_there) {
  Fixture f;
  f.start({}, {}, {"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=worker_exit=1:0:0"});
  f.submit(spec(f.tmp, 2));
  f.finish();
  const auto& coordinator = f.cluster.coordinator->log();
  BOOST_TEST(f.client->log().find("injected worker exit") != std::string::npos, f.logs());
  BOOST_TEST(coordinator.find("respawned worker") != std::string::npos, f.logs());
  BOOST_TEST(coordinator.find("could not respawn") == std::string::npos, f.logs());
  BOOST_TEST(f.cluster.logs().find("died; respawned it") != std::string::npos, f.logs());
  BOOST_TEST(f.client->log().find("respawned worker") != std::string::npos, f.logs());
}

BOOST_AUTO_TEST_CASE(a_hung_agent_is_dropped_by_heartbeat_timeout_and_rejoins_when_it_wakes) {
  Fixture f;
  f.start({"--heartbeat-timeout", "4"});
  f.submit(spec(f.tmp, 2, "heartbeat_timeout = 3\n"));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 6, 180), f.logs());
  f.agent(2).send_signal(SIGSTOP);
  BOOST_REQUIRE_MESSAGE(f.cluster.coordinator->wait_for_log("agent node2 is lost", 30), f.logs());
  BOOST_REQUIRE_MESSAGE(f.cluster.coordinator->wait_for_log("node2 sent no heartbeat", 30), f.logs());
  f.agent(2).send_signal(SIGCONT);
  f.finish();
  // Awake again, it learns it was dropped and joins again.
  BOOST_TEST(f.agent(2).wait_for_log("it does not know this agent", 30), f.logs());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_of(f.cluster.coordinator->log(), "agent node2 joined:") < 2 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  BOOST_TEST(count_of(f.cluster.coordinator->log(), "agent node2 joined:") == 2u, f.logs());
}

BOOST_AUTO_TEST_CASE(two_agents_killed_one_after_the_other_with_replication_3) {
  Fixture f;
  f.start();
  f.submit(spec(f.tmp, 3));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 5, 180), f.logs());
  f.agent(1).kill_now();
  BOOST_REQUIRE_MESSAGE(f.cluster.coordinator->wait_for_log("agent node1 is lost", 30), f.logs());
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 14, 180), f.logs());
  f.agent(3).kill_now();
  auto log = f.finish();
  // After both were gone, node2's worker (scheduler id 1) ran the rest.
  BOOST_TEST(f.cluster.coordinator->log().find("agent node3 is lost") != std::string::npos, f.logs());
}

BOOST_AUTO_TEST_CASE(a_partition_that_loses_its_only_replica_is_placed_again) {
  Fixture f;
  f.start();
  f.submit(spec(f.tmp, 1));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 6, 180), f.logs());
  f.agent(2).kill_now();
  f.finish();
  BOOST_TEST(f.cluster.coordinator->log().find("lost its last replica; placed again on agent") != std::string::npos,
             f.logs());
}

// A file where an agent's shard cache goes: the agent starts (its data
// directory is writable) but cannot take a partition.
void break_shard_cache(const TempDir& tmp, const std::string& agent) {
  const auto cache = tmp.file("data-" + agent + "/shards");
  fs::remove_all(cache);
  fs::create_directories(fs::path(cache).parent_path());
  std::ofstream(cache) << "not a directory\n";
}

// An agent that joins but cannot take partitions takes no part in the run,
// and a partition that loses its only replica goes past a live agent that
// cannot take it to one that can. The workers are slowed so that the run
// still trains when node2 is killed, after node4's process has started and
// joined (about a second). At 4x a fast VM trained all 36 units in 1.3 s,
// before the kill, and the test failed; at 30x a unit takes about 0.8 s
// there and the run about 10 s.
BOOST_AUTO_TEST_CASE(a_lost_partition_skips_agents_that_cannot_take_it) {
  Fixture f;
  const std::vector<std::string> slow{"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=slow_worker=0:30"};
  f.start({}, {}, slow);
  f.submit(spec(f.tmp, 1));  // one holder a partition
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 3, 180), f.logs());
  break_shard_cache(f.tmp, "node4");
  f.cluster.start_agent("node4", f.port, slow);
  BOOST_REQUIRE_MESSAGE(
      f.cluster.coordinator->wait_for_log("agent node4 joined but could not take partitions, so it takes no part", 60),
      f.logs());
  // node1 trains on what it holds, but the emptiest agent it ties with
  // node3 for (alphabetically first) cannot take node2's partition.
  break_shard_cache(f.tmp, "node1");
  f.agent(2).kill_now();
  f.finish();
  const auto coordinator = f.cluster.coordinator->log();
  BOOST_TEST(
      std::regex_search(coordinator, std::regex("could not be placed again: placing part-[0-9]+\\.bin on node1")),
      f.logs());
  BOOST_TEST(coordinator.find("lost its last replica; placed again on agent node3") != std::string::npos, f.logs());
  // node4 was never asked again: it is not in the run.
  BOOST_TEST(count_of(coordinator, " on node4: ") == 1u, f.logs());
}

// The coordinator dies mid-epoch and is restarted on its state directory:
// the experiment resumes, the committed units are kept as they were, the
// agents rejoin by themselves and the client reconnects.
BOOST_AUTO_TEST_CASE(a_coordinator_killed_mid_epoch_resumes_after_a_restart) {
  Fixture f;
  f.start();
  f.submit(spec(f.tmp, 2));
  BOOST_REQUIRE_MESSAGE(wait_for_units(*f.client, 8, 180), f.logs());
  f.cluster.coordinator->kill_now();
  auto before = open_store(experiment_dir(f.tmp))->unit_log();
  BOOST_REQUIRE(before.size() >= 8u);
  BOOST_REQUIRE(before.size() < static_cast<size_t>(kUnits));
  f.cluster.start_coordinator(f.port);
  auto log = f.finish();
  for (size_t i = 0; i < before.size(); ++i) {
    BOOST_TEST(log[i].seq == before[i].seq);
    BOOST_TEST(log[i].state_checksum == before[i].state_checksum);
  }
  BOOST_TEST(f.client->log().find("reconnected") != std::string::npos, f.logs());
  BOOST_TEST(read_json(f.tmp.file("client-run") + "/summary.json")["resumes"] == 1);
}

// The coordinator crashes after a unit's state is durable and before the
// unit is acknowledged: after the restart that unit counts and never reruns.
BOOST_AUTO_TEST_CASE(a_coordinator_crash_between_state_written_and_acknowledged_loses_nothing) {
  Fixture f;
  f.start({}, {"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=crash=after_commit:9"});
  f.submit(spec(f.tmp, 2));
  BOOST_REQUIRE_MESSAGE(f.cluster.coordinator->wait_exit(180) == 137, f.logs());
  auto before = open_store(experiment_dir(f.tmp))->unit_log();
  BOOST_REQUIRE_EQUAL(commits_in(before), 9u);
  f.cluster.start_coordinator(f.port);
  auto log = f.finish();
  for (size_t i = 0; i < before.size(); ++i) BOOST_TEST(log[i].seq == before[i].seq);
}
