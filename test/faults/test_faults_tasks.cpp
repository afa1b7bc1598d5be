// A killed agent under each structured task (docs/TASKS.md): a coordinator and three agents on 127.0.0.1
// train a language model, a captioner and a detector; one agent is killed mid-run, its units go back to
// the queue and run on the partitions' replicas, and the run finishes complete, scored on the test set.
#define BOOST_TEST_MODULE faults_tasks
#include <boost/test/unit_test.hpp>

#include "test/support/cluster_util.hpp"
#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;

namespace {

constexpr int kConfigs = 2, kPartitions = 3, kEpochs = 2;

// The spec of `task` over `data` (its [data] lines) with the model's [space] lines in `space`.
std::string task_spec(const TempDir& tmp, const std::string& task, const std::string& data, const std::string& space) {
  return tmp.write(task + ".toml", "[experiment]\nname = \"" + task + "\"\ntask = \"" + task +
                                       "\"\nepochs = " + std::to_string(kEpochs) + "\nseed = 3\n[data]\n" + data +
                                       "partitions = " + std::to_string(kPartitions) +
                                       "\n[cluster]\nreplication = 2\n[space]\n" + space +
                                       "lr = [0.003, 0.01]\nbatch_size = [16]\n");
}

std::string shapes_data(const TempDir& tmp, const std::string& annotations) {
  auto made = run_command(std::string(CEREBRO_SOURCE_DIR) + "/tools/make_shapes --out " + tmp.file("shapes") +
                          " --images 150 --size 16");
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.text);
  return "source = \"coco\"\npath = \"" + tmp.file("shapes") + "\"\nannotations = \"" + annotations +
         "\"\nimage_root = \"images\"\ncolor = \"rgb\"\n";
}

// Runs `spec_path` on three agents, kills node2 after two units and checks that the run completed with
// `test_metric` for its best config.
void survives_a_killed_agent(const TempDir& tmp, const std::string& spec_path, const std::string& test_metric) {
  Cluster cluster{tmp};
  const int port = free_port();
  cluster.start_coordinator(port);
  cluster.wait_listening(port);
  for (const char* name : {"node1", "node2", "node3"}) cluster.start_agent(name, port);
  cluster.wait_joined({"node1", "node2", "node3"});
  ChildProcess client({cerebro_binary(), "run", spec_path, "--cluster", "127.0.0.1:" + std::to_string(port),
                       "--token-file", cluster.token, "--out", tmp.file("client-run")},
                      tmp.file("client.log"));
  BOOST_REQUIRE_MESSAGE(wait_for_units(client, 2, 180), client.log() + cluster.logs());
  cluster.agents.at(1)->kill_now();
  const int exit_code = client.wait_exit(300);
  BOOST_REQUIRE_MESSAGE(exit_code == 0, "client exit code " << exit_code << "\n" << client.log() << cluster.logs());
  BOOST_TEST(cluster.coordinator->log().find("agent node2 left") != std::string::npos, cluster.logs());
  check_complete_run(open_store(experiment_dir(tmp.file("state")))->unit_log(), kConfigs, kPartitions, kEpochs);
  auto summary = read_json(tmp.file("client-run") + "/summary.json");
  BOOST_TEST(summary["best"].contains(test_metric), summary.dump());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_language_model_survives_a_killed_agent) {
  TempDir tmp;
  survives_a_killed_agent(
      tmp,
      task_spec(tmp, "language_model",
                "source = \"text\"\npath = \"/usr/share/common-licenses\"\nwindow = 33\n"
                "min_count = 2\n",
                "model = [\"transformer\"]\nlayers = [1]\nd_model = [32]\nheads = [2]\nff = [64]\n"),
      "test_perplexity");
}

BOOST_AUTO_TEST_CASE(a_captioner_survives_a_killed_agent) {
  TempDir tmp;
  survives_a_killed_agent(tmp,
                          task_spec(tmp, "captioning", shapes_data(tmp, "captions.json"),
                                    "model = [\"captioner\"]\nchannels = [[16, 32]]\nlayers = [1]\nd_model = [32]\n"
                                    "heads = [2]\nff = [64]\n"),
                          "test_bleu4");
}

BOOST_AUTO_TEST_CASE(a_detector_survives_a_killed_agent) {
  TempDir tmp;
  survives_a_killed_agent(tmp,
                          task_spec(tmp, "detection", shapes_data(tmp, "instances.json"),
                                    "model = [\"detector\"]\nchannels = [[16, 32]]\nhead = [32]\n"),
                          "test_map50");
}
