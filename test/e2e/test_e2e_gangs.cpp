// Data-parallel gangs in real runs through the `cerebro`
// executable: a gang spanning two agent processes on loopback, a gang
// member that dies and one that hangs past the gang timeout (the attempt
// fails whole, its units run again from the last checkpoint).
#define BOOST_TEST_MODULE e2e_gangs
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "test/support/cluster_util.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;
namespace fs = std::filesystem;

namespace {

// Every (config, partition, epoch) exactly once, every entry a member of a
// gang of `size` whose members are all in the log, MOP's invariants (gangs
// whole, isolation) hold.
void check_gang_log(const std::vector<UnitLogEntry>& log, int partitions, int epochs, int size) {
  check_complete_run(log, 1, partitions, epochs);
  std::map<int64_t, int> members;
  for (const auto& e : log) {
    BOOST_TEST(e.gang > 0, "unit p" << e.partition << " e" << e.epoch << " ran alone");
    BOOST_TEST(e.gang_size == size);
    ++members[e.gang];
  }
  for (const auto& [gang, count] : members) BOOST_TEST(count == size, "gang " << gang << " has " << count);
}

std::string gang_spec(const TempDir& tmp, const std::string& cluster_keys, int epochs = 2) {
  return tmp.write("gang.toml", "[experiment]\nname = \"gangs\"\nepochs = " + std::to_string(epochs) +
                                    "\nseed = 3\n[data]\nsource = \"idx\"\npath = \"" + std::string(fashion_mnist) +
                                    "\"\nlimit = 2000\npartitions = 2\n[cluster]\nparallelism = \"data\"\n" +
                                    cluster_keys + "[space]\nmodel = [\"mlp\"]\nlr = [2e-3]\nhidden = [[64]]\n");
}

}  // namespace

// A coordinator and two agents with one worker each, both holding both
// partitions: the single config trains as a gang of 2 spanning the processes.
BOOST_AUTO_TEST_CASE(a_gang_spans_two_agent_processes) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  cluster.start_with_agents(port, {"node1", "node2"});
  auto spec = gang_spec(tmp, "replication = 2\n");
  auto out = run_cerebro("run " + spec + cluster.client_flags(port) + " --out " + tmp.file("client-run"));
  BOOST_TEST_INFO(out.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  auto summary = read_json(tmp.file("client-run") + "/summary.json");
  BOOST_TEST(summary["workers"] == 2);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.6);
  BOOST_TEST(summary["configs"][0]["training"]["gangs"]["2"] == 2);  // one gang per epoch
  BOOST_TEST(summary["configs"][0]["training"]["units_alone"] == 0);

  std::string dir;
  for (const auto& e : fs::directory_iterator(tmp.file("state") + "/experiments")) dir = e.path().string();
  BOOST_REQUIRE(!dir.empty());
  auto log = open_store(dir)->unit_log();
  check_gang_log(log, 2, 2, 2);
  std::set<WorkerId> workers;
  for (const auto& e : log) workers.insert(e.worker);
  BOOST_TEST(workers.size() == 2u);  // one member on each agent
}

// A replay forms the original's gangs again, ranks as recorded, and
// reproduces every epoch's metrics bit for bit (before, it trained every unit
// alone and could compare only the epochs before a config's first gang).
BOOST_AUTO_TEST_CASE(a_replay_of_a_gang_run_forms_its_gangs_and_reproduces_it) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + gang_spec(tmp, "workers = 2\n") + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_REQUIRE(read_json(run + "/summary.json")["configs"][0]["training"]["gang_units"] == 4);
  auto replayed = run_cerebro("run --replay " + run + " --out " + tmp.file("replay"));
  BOOST_TEST_INFO(replayed.text);
  BOOST_TEST(replayed.exit_code == 0);
  BOOST_TEST(replayed.text.find("replay reproduced the metrics of all 1 configs exactly") != std::string::npos);
  auto units = [](const std::string& dir) {
    std::vector<std::tuple<int32_t, int32_t, int32_t>> order;  // epoch, partition, gang size in log order
    for (const auto& e : open_store(dir)->unit_log()) order.emplace_back(e.epoch, e.partition, e.gang_size);
    return order;
  };
  BOOST_TEST((units(tmp.file("replay")) == units(run)));
}

// A member dies before its first step: the gang's attempt fails whole and
// nothing of it is committed; its peer, still waiting inside the attempt
// until the timeout, is out of the schedule until it answers; the agent
// respawns the dead worker, and the units run again from the config's last
// checkpoint (here on the fresh worker, MOP): each exactly once in the log.
BOOST_AUTO_TEST_CASE(a_gang_member_that_dies_fails_the_attempt_and_the_units_run_again) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto spec = gang_spec(tmp, "workers = 2\nheartbeat_timeout = 3\nmax_unit_retries = 5\n");
  auto out = run_command(with_faults("worker_exit=0:1:0") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("injected worker exit") != std::string::npos);
  BOOST_TEST(out.text.find("gang 1 of config 0 (2 workers) failed") != std::string::npos);
  auto log = open_store(run)->unit_log();
  // Each unit exactly once (the failed attempt committed nothing), gangs
  // whole, MOP's invariants.
  check_complete_run(log, 1, 2, 2);
  BOOST_TEST(read_json(run + "/summary.json")["best"]["test_accuracy"].get<double>() > 0.6);
}

// A gang peer that hangs mid-attempt and stays hung past the gang timeout:
// node2's agent process stops itself (SIGSTOP, as a frozen VM would) at its
// 45th gang step, inside the second epoch's gang (about 30 steps a gang).
// Its peer on node1 waits in the gradient sum until the gang timeout
// (heartbeat_timeout, 8 s) or the coordinator drops the silent agent, the
// attempt fails and commits nothing, and the attempt's units run again from
// the config's last checkpoint (the state after the first epoch) on node1 alone: the run
// finishes with every unit committed exactly once, the first epoch as a gang.
BOOST_AUTO_TEST_CASE(a_gang_peer_hung_past_the_timeout_fails_the_attempt_and_the_units_run_again) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port);
  cluster.wait_listening(port);
  cluster.start_agent("node1", port);
  auto& hung = cluster.start_agent(
      "node2", port,
      std::vector<std::string>{"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=stop=gang_step:45"});
  cluster.wait_joined({"node1", "node2"});
  // 8 s: long enough that a loaded machine (tests run in parallel) loses no
  // live agent, short enough for a test.
  auto spec = gang_spec(tmp, "replication = 2\nheartbeat_timeout = 8\nmax_unit_retries = 5\n", 3);
  auto out = run_cerebro("run " + spec + cluster.client_flags(port) + " --out " + tmp.file("client-run"));
  BOOST_TEST_INFO(out.text + cluster.logs());
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(hung.log().find("fault injection: stopping (SIGSTOP) at gang_step") != std::string::npos);
  // The attempt ends whichever comes first: the survivor's timeout in the
  // gang's sum (the gang fails, "... failed, its units are pending again")
  // or the run losing the silent agent (the gang is requeued whole). Under
  // load the first can win and node1 finish the run before the second: then
  // no "is lost" line is ever printed (it failed once so under ctest -j2).
  const std::string said = out.text + coordinator.log();
  BOOST_TEST((said.find("agent node2 is lost") != std::string::npos ||
              said.find("(2 workers) failed, its units are pending again") != std::string::npos));

  std::string dir;
  for (const auto& e : fs::directory_iterator(tmp.file("state") + "/experiments")) dir = e.path().string();
  BOOST_REQUIRE(!dir.empty());
  auto log = open_store(dir)->unit_log();
  check_complete_run(log, 1, 2, 3);  // each unit exactly once: the failed attempt committed nothing
  std::set<WorkerId> later_workers;
  for (const auto& e : log) {
    if (e.epoch == 0) {
      BOOST_TEST(e.gang > 0);  // the first epoch, before the hang, ran as a gang of 2
      BOOST_TEST(e.gang_size == 2);
    } else {
      BOOST_TEST(e.gang == 0);  // the rest on node1 alone
      later_workers.insert(e.worker);
    }
  }
  BOOST_TEST(later_workers.size() == 1u);
  BOOST_TEST(read_json(tmp.file("client-run") + "/summary.json")["best"]["test_accuracy"].get<double>() > 0.6);
}

// A gang larger than the workers holding partitions is a clear error, and
// the run leaves nothing behind.
BOOST_AUTO_TEST_CASE(a_gang_larger_than_the_workers_is_refused) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + gang_spec(tmp, "workers = 2\nmax_gang = 3\n") + " --out " + run);
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(
      out.text.find("[cluster] max_gang = 3 is larger than the 2 worker(s) holding partitions") != std::string::npos,
      out.text);
  BOOST_TEST(!fs::exists(run));
}
