#define BOOST_TEST_MODULE cluster
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "runtime/store/state_store.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "test/support/cluster_util.hpp"
#include "test/support/e2e_util.hpp"
#include "tools/child_process.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

std::string experiment_dir(const TempDir& tmp) {
  for (const auto& e : fs::directory_iterator(tmp.file("state") + "/experiments")) return e.path().string();
  return {};
}

}  // namespace

// A coordinator and three agent processes on loopback run a small experiment:
// every config visits every partition once per epoch, isolation holds, units
// ran only where their partition was placed, replicas were used, and the
// client receives the run files. The first agent starts before the coordinator.
BOOST_AUTO_TEST_CASE(three_agents_run_an_experiment_by_model_hopping) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  cluster.start_agent("node1", port, cluster.token);  // before the coordinator: it retries
  BOOST_REQUIRE_MESSAGE(cluster.agents[0]->wait_for_log("not reachable", 20), cluster.logs());
  cluster.start_coordinator(port);
  cluster.wait_listening(port);
  cluster.start_agent("node2", port, cluster.token);
  cluster.start_agent("node3", port, cluster.token);
  cluster.wait_joined({"node1", "node2", "node3"});

  auto status = run_cerebro("status --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + cluster.token);
  BOOST_TEST(status.exit_code == 0);
  for (const char* name : {"node1", "node2", "node3"}) BOOST_TEST(status.text.find(name) != std::string::npos);

  auto spec =
      tmp.write("small.toml",
                "[experiment]\nname = \"cluster-small\"\nepochs = 2\nseed = 5\n[data]\nsource = \"idx\"\npath = \"" +
                    std::string(fashion_mnist) +
                    "\"\nlimit = 1500\npartitions = 3\n[cluster]\nreplication = 2\n[space]\n"
                    "model = [\"mlp\"]\nlr = [1e-3, 2e-3, 3e-3]\nhidden = [[64]]\n");
  auto out = run_cerebro("run " + spec + " --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " +
                         cluster.token + " --out " + tmp.file("client-run"));
  BOOST_TEST_INFO(out.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto summary = read_json(tmp.file("client-run") + "/summary.json");
  BOOST_TEST(summary["workers"] == 3);
  BOOST_TEST(summary["partitions"] == 3);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.5);
  BOOST_TEST(fs::exists(tmp.file("client-run") + "/best_model.pt"));
  BOOST_TEST(fs::exists(tmp.file("client-run") + "/metrics.csv"));
  // The TensorBoard logs come along: the experiment's file and one per config.
  int event_files = 0;
  for (const auto& f : fs::recursive_directory_iterator(tmp.file("client-run") + "/tensorboard"))
    event_files += f.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  BOOST_TEST(event_files == 1 + 3);
  BOOST_TEST(fs::is_directory(tmp.file("client-run") + "/tensorboard/config-2"));

  auto dir = experiment_dir(tmp);
  BOOST_REQUIRE(!dir.empty());
  auto store = StateStore::open(dir + "/state", false);
  BOOST_REQUIRE(store.ok());
  auto log = (*store)->unit_log();
  BOOST_REQUIRE_EQUAL(log.size(), 3u * 3u * 2u);
  auto invariants = check_mop_invariants(committed_records(log), ExpectedRun{3, {{0, 2}, {1, 2}, {2, 2}}});
  BOOST_TEST(invariants.ok(), invariants.message());
  // Placement: partition p on agents p and p+1 (mod 3); one worker per agent.
  std::set<std::pair<int, int>> pairs;
  for (const auto& e : log) {
    bool placed = e.worker == e.partition || e.worker == (e.partition + 1) % 3;
    BOOST_TEST(placed, "unit on worker " << e.worker << " for partition " << e.partition);
    pairs.insert({e.partition, e.worker});
  }
  BOOST_TEST(pairs.size() > 3u, "some partition was trained on two of its replicas");
  // Shards were transferred in chunks and cached on the agents.
  int cached = 0;
  for (const char* name : {"data-node1", "data-node2", "data-node3"})
    for (const auto& e : fs::recursive_directory_iterator(tmp.file(name)))
      if (e.path().extension() == ".bin" && e.path().filename().string().find("-part-") != std::string::npos) ++cached;
  BOOST_TEST(cached == 6);  // 3 partitions x replication 2

  // The same spec again: the agents find their cached shards by checksum and
  // fetch nothing; a corrupted cached shard is detected and fetched again.
  fs::path corrupt;
  for (const auto& e : fs::recursive_directory_iterator(tmp.file("data-node1")))
    if (e.path().filename().string().find("part-") != std::string::npos) corrupt = e.path();
  BOOST_REQUIRE(!corrupt.empty());
  {
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  out = run_cerebro("run " + spec + " --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + cluster.token +
                    " --out " + tmp.file("client-run-2"));
  BOOST_TEST_INFO(out.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(cluster.logs().find("cached copy matches its checksum, no transfer") != std::string::npos);
  BOOST_TEST(cluster.agents[0]->log().find("cached copy does not match its checksum, fetching it again") !=
             std::string::npos);
}

// A node that joins while an experiment runs receives replicas and units.
BOOST_AUTO_TEST_CASE(an_agent_joining_mid_run_receives_units) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port);
  BOOST_REQUIRE(coordinator.wait_for_log("listening on", 20));
  cluster.start_agent("node1", port, cluster.token);
  cluster.start_agent("node2", port, cluster.token);
  BOOST_REQUIRE(coordinator.wait_for_log("agent node1 joined", 60));
  BOOST_REQUIRE(coordinator.wait_for_log("agent node2 joined", 60));
  auto spec = tmp.write(
      "cnn.toml", "[experiment]\nname = \"elastic\"\nepochs = 4\n[data]\nsource = \"idx\"\npath = \"" +
                      std::string(fashion_mnist) +
                      "\"\nlimit = 4000\npartitions = 2\n[space]\nmodel = [\"cnn\"]\nlr = [1e-3, 2e-3, 3e-3, 4e-3]\n");
  ChildProcess client({cerebro_binary(), "run", spec, "--cluster", "127.0.0.1:" + std::to_string(port), "--token-file",
                       cluster.token, "--out", tmp.file("client-run")},
                      tmp.file("client.log"));
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("placed 2 partitions", 60), cluster.logs());
  cluster.start_agent("node3", port, cluster.token);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent node3 joined mid-run", 60), cluster.logs() + client.log());
  BOOST_REQUIRE_MESSAGE(client.wait_exit(300) == 0, client.log() + cluster.logs());
  auto store = StateStore::open(experiment_dir(tmp) + "/state", false);
  BOOST_REQUIRE(store.ok());
  auto log = (*store)->unit_log();
  int on_new_worker = 0;
  for (const auto& e : log) on_new_worker += e.worker == 2 ? 1 : 0;
  BOOST_TEST(on_new_worker > 0, "the joining node's worker ran units");
  auto invariants = check_mop_invariants(committed_records(log), ExpectedRun{2, {{0, 4}, {1, 4}, {2, 4}, {3, 4}}});
  BOOST_TEST(invariants.ok(), invariants.message());
}

// A config added while the run trains is planned on the workers
// live then. A pipeline of 3 stages is refused on the 2 workers the run
// started with, and taken once a third agent joined; it trains to the end
// on the three. MOP units are slowed (each agent's worker, 20x; no gangs)
// so that the run is still training when the pause arrives.
BOOST_AUTO_TEST_CASE(a_config_added_after_an_agent_joined_is_planned_on_the_live_workers) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  const std::vector<std::string> slow{"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=slow_worker=0:20"};
  cluster.start_coordinator(port);
  cluster.wait_listening(port);
  cluster.start_agent("node1", port, slow);
  cluster.start_agent("node2", port, slow);
  cluster.wait_joined({"node1", "node2"});
  // An mlp of two hidden layers: three top-level children, so three stages.
  auto spec = tmp.write("mlp.toml", "[experiment]\nname = \"live\"\nepochs = 3\n[data]\nsource = \"idx\"\npath = \"" +
                                        std::string(fashion_mnist) +
                                        "\"\nlimit = 8000\npartitions = 2\n[cluster]\nparallelism = \"mop\"\n"
                                        "[space]\nmodel = [\"mlp\"]\n"
                                        "hidden = [[32, 32]]\nlr = [0.001, 0.002]\n");
  ChildProcess client({cerebro_binary(), "run", spec, "--cluster", "127.0.0.1:" + std::to_string(port), "--token-file",
                       cluster.token, "--out", tmp.file("client-run")},
                      tmp.file("client.log"));
  BOOST_REQUIRE_MESSAGE(cluster.coordinator->wait_for_log("placed 2 partitions", 60), cluster.logs());
  const std::string experiment = fs::path(experiment_dir(tmp)).filename().string();
  auto steer = [&](const std::string& script) {
    auto path = tmp.write("steer.txt", script);
    return run_cerebro("repl" + cluster.client_flags(port) + " < " + path);
  };
  auto before = steer("pause " + experiment + "\nadd " + experiment + " parallelism=pipeline stages=3\n");
  BOOST_TEST(before.text.find("[space] stages = 3: more stages than the 2 workers") != std::string::npos, before.text);
  cluster.start_agent("node3", port, slow);
  BOOST_REQUIRE_MESSAGE(cluster.coordinator->wait_for_log("agent node3 joined mid-run", 60), cluster.logs());
  auto after = steer("add " + experiment + " parallelism=pipeline stages=3\nresume " + experiment + "\n");
  BOOST_TEST(after.exit_code == 0, after.text);
  BOOST_TEST(after.text.find("added config 2 to experiment " + experiment) != std::string::npos, after.text);
  BOOST_REQUIRE_MESSAGE(client.wait_exit(300) == 0, client.log() + cluster.logs());

  auto store = StateStore::open(experiment_dir(tmp) + "/state", false);
  BOOST_REQUIRE(store.ok());
  const auto log = (*store)->unit_log();
  auto invariants = check_mop_invariants(committed_records(log), ExpectedRun{2, {{0, 3}, {1, 3}, {2, 3}}});
  BOOST_TEST(invariants.ok(), invariants.message());
  int pipeline_units = 0;
  for (const auto& e : log) {
    if (e.config != 2) continue;
    ++pipeline_units;
    BOOST_TEST(std::set<WorkerId>(e.pipeline_workers.begin(), e.pipeline_workers.end()).size() == 3u,
               "config 2's unit p" << e.partition << " e" << e.epoch << " ran over three workers");
  }
  BOOST_TEST(pipeline_units == 6);
}

// Agents rejoin by themselves when the coordinator restarts; a hung
// coordinator (its connection still open) is noticed by unanswered heartbeats.
BOOST_AUTO_TEST_CASE(agents_rejoin_a_restarted_coordinator) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  cluster.start_coordinator(port);
  BOOST_REQUIRE(cluster.coordinator->wait_for_log("listening on", 20));
  auto& agent = cluster.start_agent("node1", port, cluster.token);
  BOOST_REQUIRE(cluster.coordinator->wait_for_log("agent node1 joined", 60));
  cluster.coordinator->send_signal(SIGSTOP);
  BOOST_REQUIRE_MESSAGE(agent.wait_for_log("lost the coordinator (heartbeat unanswered", 30), cluster.logs());
  cluster.coordinator->kill_now();
  std::filesystem::remove(tmp.file("coordinator.log"));
  cluster.start_coordinator(port);
  BOOST_TEST_MESSAGE("waiting for the agent to rejoin");
  BOOST_TEST(cluster.coordinator->wait_for_log("agent node1 joined", 60), cluster.logs());
}

BOOST_AUTO_TEST_CASE(wrong_token_and_duplicate_names_are_refused) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("listening on", 20), cluster.logs());
  auto bad = write_token(tmp, "bad-token", "not-the-right-token-at-all");
  auto& intruder = cluster.start_agent("intruder", port, bad);
  BOOST_TEST(intruder.wait_exit(30) == 1);
  BOOST_TEST(intruder.log().find("wrong token") != std::string::npos);
  BOOST_TEST(coordinator.wait_for_log("wrong token", 10));
  auto status = run_cerebro("status --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + bad);
  BOOST_TEST(status.exit_code != 0);
  BOOST_TEST(status.text.find("wrong token") != std::string::npos);

  cluster.start_agent("twin", port, cluster.token);
  BOOST_REQUIRE(coordinator.wait_for_log("agent twin joined", 60));
  auto& second = cluster.start_agent("twin", port, cluster.token);
  BOOST_TEST(second.wait_exit(60) == 1);
  BOOST_TEST(second.log().find("already joined") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unreachable_coordinator_and_rejected_spec_give_clear_errors) {
  TempDir tmp;
  auto token = write_token(tmp, "token", "s3cret-token-for-tests-0123");
  int port = free_port();
  auto status =
      run_cerebro("status --timeout 2 --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token);
  BOOST_TEST(status.exit_code != 0);
  BOOST_TEST(status.text.find("cannot reach the coordinator") != std::string::npos);

  auto bad_spec = tmp.write("bad.toml", "[experiment]\nepochz = 1\n");
  auto out = run_cerebro("run " + bad_spec + " --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token);
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("epochz") != std::string::npos);

  Cluster cluster(tmp);
  auto& coordinator = cluster.start_coordinator(port);
  BOOST_REQUIRE(coordinator.wait_for_log("listening on", 20));
  ChildProcess second({cerebro_binary(), "coordinator", "--listen", "127.0.0.1:" + std::to_string(port), "--state",
                       tmp.file("state2"), "--token-file", token},
                      tmp.file("second.log"));
  BOOST_TEST(second.wait_exit(20) == 1);
  BOOST_TEST(second.log().find("cannot listen") != std::string::npos);

  auto agent = run_cerebro("agent --join 127.0.0.1:" + std::to_string(port) + " --token-file " + token +
                           " --data-dir /proc/forbidden --name x");
  BOOST_TEST(agent.exit_code != 0);
  BOOST_TEST(agent.text.find("not writable") != std::string::npos);
}

// Mutual TLS through CAF's OpenSSL module, with a CA and a node certificate
// the test makes with the openssl command line tool.
BOOST_AUTO_TEST_CASE(tls_connections_work_and_plaintext_peers_are_refused) {
  TempDir tmp;
  auto run = [&](const std::string& cmd) { return run_command("cd " + tmp.file("") + " && " + cmd).exit_code; };
  BOOST_REQUIRE(run("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
                    "-subj /CN=cerebro-test-ca") == 0);
  BOOST_REQUIRE(run("openssl req -newkey rsa:2048 -nodes -keyout node.key -out node.csr -subj /CN=localhost") == 0);
  BOOST_REQUIRE(run("openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out node.pem -days 2") ==
                0);
  std::vector<std::string> tls{"--tls-cert",         tmp.file("node.pem"), "--tls-key",
                               tmp.file("node.key"), "--tls-ca",           tmp.file("ca.pem")};
  auto tls_flags =
      " --tls-cert " + tmp.file("node.pem") + " --tls-key " + tmp.file("node.key") + " --tls-ca " + tmp.file("ca.pem");
  auto token = write_token(tmp, "token", "s3cret-token-for-tests-0123");
  int port = free_port();
  std::vector<std::string> coordinator_args{
      cerebro_binary(), "coordinator",     "--listen",     "127.0.0.1:" + std::to_string(port),
      "--state",        tmp.file("state"), "--token-file", token};
  coordinator_args.insert(coordinator_args.end(), tls.begin(), tls.end());
  ChildProcess coordinator(coordinator_args, tmp.file("coordinator.log"));
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("(TLS)", 20), coordinator.log());
  std::vector<std::string> agent_args{cerebro_binary(), "agent",  "--join",     "127.0.0.1:" + std::to_string(port),
                                      "--token-file",   token,    "--data-dir", tmp.file("d1"),
                                      "--name",         "secure1"};
  agent_args.insert(agent_args.end(), tls.begin(), tls.end());
  ChildProcess agent(agent_args, tmp.file("agent.log"));
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent secure1 joined", 60), coordinator.log() + agent.log());
  auto secure =
      run_cerebro("status --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token + tls_flags);
  BOOST_TEST(secure.exit_code == 0, secure.text);
  BOOST_TEST(secure.text.find("secure1") != std::string::npos);
  auto plain = run_cerebro("status --timeout 3 --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token);
  BOOST_TEST(plain.exit_code != 0);
  auto half = run_cerebro("status --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token +
                          " --tls-cert " + tmp.file("node.pem"));
  BOOST_TEST(half.exit_code != 0);
  BOOST_TEST(half.text.find("needs all of") != std::string::npos);
}
