// The REPL driven through standard input (no terminal: no prompts), on an
// embedded cluster and a small Fashion-MNIST experiment: every command,
// mistakes included. A mistake prints a clear error and the session goes on;
// the exit code is non-zero when any command failed.
#define BOOST_TEST_MODULE repl_script
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "test/support/e2e_util.hpp"
#include "tools/child_process.hpp"

using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

Output run_repl(const TempDir& tmp, const std::string& script, const std::string& environment = "") {
  auto path = tmp.write("script.txt", script);
  return run_command(environment + cerebro_binary() + " repl --workers 2 --state " + tmp.file("state") + " < " + path);
}

// Both workers' units take 10 times as long (test-only fault injection): the
// steering commands after `submit` need the experiment running with config 1
// unfinished, and without the slowdown its 6 units (one after the other) can
// take less time than the pause needs to arrive on a loaded machine.
const char* slow_workers =
    "CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test CEREBRO_FAULTS='slow_worker=0:10;slow_worker=1:10' ";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(every_command_through_a_script) {
  TempDir tmp;
  auto spec = tmp.write("small.toml", small_spec("model = [\"mlp\"]\nhidden = [[32]]\nlr = [0.002, 0.001]\n", 3, 4000));
  auto model = tmp.file("config0.pt");
  auto out = run_repl(tmp,
                      "help\n"
                      "help clone\n"
                      "frobnicate 3\n"
                      "status\n"
                      "submit " +
                          spec +
                          "\n"
                          "submit " +
                          tmp.file("missing.toml") +
                          "\n"
                          "pause\n"
                          "pause\n"
                          "status\n"
                          "show 0\n"
                          "show 42\n"
                          "show zero\n"
                          "top\n"
                          "top 1\n"
                          "stop 1\n"
                          "stop 1\n"
                          "add lr=0.003\n"
                          "add lr\n"
                          "clone 0 lr=0.0005   # a comment\n"
                          "clone 0 hidden=[8]\n"
                          "clone 0\n"
                          "resume\n"
                          "wait\n"
                          "top 10\n"
                          "show 2\n"
                          "show 3\n"
                          "export 0 " +
                          model +
                          "\n"
                          "export 0\n"
                          "stop 0\n"
                          "quit\n"
                          "status\n",
                      slow_workers);
  const auto& t = out.text;
  BOOST_TEST_INFO(t);
  BOOST_TEST(out.exit_code == 1, "a failed command makes the exit code non-zero");
  BOOST_TEST(!has(t, "cerebro>"), "no prompts without a terminal");
  // help
  BOOST_TEST(has(t, "commands (help CMD for details"));
  BOOST_TEST(has(t, "clone CONFIG key=value ...\n  a new config from CONFIG's latest weights"));
  BOOST_TEST(has(t, "error: unknown command \"frobnicate\"; commands: status, submit"));
  // status and submit
  BOOST_TEST(has(t, "agents:\n"));
  BOOST_TEST(has(t, "local "));
  BOOST_TEST(has(t, "submitted experiment small-"));
  BOOST_TEST(has(t, "missing.toml"));
  // pause, show, top while paused
  BOOST_TEST(has(t, "paused: running units finish, no new unit starts"));
  BOOST_TEST(has(t, "error: the experiment is already paused"));
  BOOST_TEST(has(t, "running    "));
  BOOST_TEST(has(t, ": paused, "), "status says which experiments are paused");
  BOOST_TEST(has(t, "config 0 of experiment small-"));
  BOOST_TEST(has(t, "params: model=mlp lr=0.002"));
  BOOST_TEST(has(t, "error: the experiment has no config 42 (configs: 0..1)"));
  BOOST_TEST(has(t, "error: show: \"zero\" is not a config: give its id (3) or EXPERIMENT/ID (usage: show CONFIG"));
  BOOST_TEST(has(t, "(paused): 2 configs"));
  // stop, add, clone
  BOOST_TEST(has(t, "config 1 of experiment small-"));
  BOOST_TEST(has(t, "stopped; its last checkpoint is kept"));
  BOOST_TEST(has(t, "error: config 1 has already ended (stopped)"));
  BOOST_TEST(has(t, "added config 2 to experiment small-"));
  BOOST_TEST(has(t, "error: \"lr\" is not key=value (e.g. lr=0.001)"));
  BOOST_TEST(has(t, "config 3 of experiment"));
  BOOST_TEST(has(t, "is a clone of config 0 (its latest weights and optimizer state)"));
  BOOST_TEST(has(t, "error: config 0's state does not fit the new parameters"));
  BOOST_TEST(has(t, "error: clone: give a config and at least one key=value"));
  // resume, wait, the leaderboard and curves of the added configs
  BOOST_TEST(has(t, "resumed"));
  BOOST_TEST(has(t, " completed: "));
  BOOST_TEST(has(t, "rank  config  status"));
  BOOST_TEST(has(t, "added by hand"));
  BOOST_TEST(has(t, "cloned from config 0"));
  BOOST_TEST(has(t, "learning curve (epoch 0 -> 2):"));
  BOOST_TEST(has(t, "train_loss   "));
  // export: a TorchScript archive (a zip file)
  BOOST_TEST(has(t, "wrote config 0's model"));
  std::ifstream in(model, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  BOOST_TEST((magic[0] == 'P' && magic[1] == 'K'), "the export is a TorchScript zip archive");
  BOOST_TEST(has(t, "error: export: give a config and a path"));
  BOOST_TEST(has(t, "has ended (completed): it cannot be steered"));
  // quit ends the script: the status after it does not run
  auto last = t.find("it cannot be steered");  // the command before quit
  BOOST_TEST(last != std::string::npos);
  BOOST_TEST(t.find("agents:\n", last) == std::string::npos);
  // The steps taken by hand are in the run's decision records: a replay,
  // which re-makes only the search procedure's decisions, refuses the run.
  std::string run_dir;
  for (const auto& e : fs::directory_iterator(tmp.file("state") + "/experiments")) run_dir = e.path().string();
  auto replay = run_cerebro("run --replay " + run_dir + " --out " + tmp.file("replay"));
  BOOST_TEST(replay.exit_code == 1, replay.text);
  BOOST_TEST(has(replay.text, "was steered by hand (pause in its decision records)"), replay.text);
}

// With several objectives the front travels with the progress
// updates, so `wait` prints it while the run goes (the live front has no
// inference_ms) and the final one at the end.
BOOST_AUTO_TEST_CASE(wait_prints_the_pareto_front_as_it_changes) {
  TempDir tmp;
  const std::string objectives = "metric = [\"val_accuracy\", \"parameters\", \"inference_ms\"]\n";
  auto text = small_spec("model = [\"mlp\"]\nhidden = [[8], [32]]\nlr = [0.002]\n", 2, 2000);
  text.insert(text.find("[data]"), objectives);
  auto spec = tmp.write("front.toml", text);
  auto out = run_repl(tmp, "submit " + spec + "\nwait\n", slow_workers);
  const auto& t = out.text;
  BOOST_TEST_INFO(t);
  BOOST_TEST(out.exit_code == 0);
  const auto live = t.find("Pareto front so far (val_accuracy max, parameters min; inference_ms when the run ends)");
  std::smatch wait_line;
  BOOST_REQUIRE(std::regex_search(t, wait_line, std::regex("experiment \\S+ completed: \\d+/\\d+ units")));
  const auto completed = static_cast<size_t>(wait_line.position(0));
  const auto final_front = t.find("Pareto front (val_accuracy max, parameters min, inference_ms min)");
  BOOST_TEST(live != std::string::npos, "the live front, streamed while wait blocks");
  BOOST_TEST(final_front != std::string::npos, "the final front after the run");
  BOOST_TEST((live < completed && completed < final_front));
}

BOOST_AUTO_TEST_CASE(a_script_without_mistakes_exits_zero) {
  TempDir tmp;
  auto out = run_repl(tmp, "help\nstatus\n\n# only a comment\nhelp wait\n");
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.exit_code == 0);
  BOOST_TEST(has(out.text, "wait [EXPERIMENT]\n  block until the experiment finishes"));
}

BOOST_AUTO_TEST_CASE(exit_ends_a_script_like_quit) {
  TempDir tmp;
  auto out = run_repl(tmp, "help wait\nexit\nstatus\nfrobnicate\n");
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.exit_code == 0, "the lines after exit do not run: no unknown-command failure");
  BOOST_TEST(has(out.text, "wait [EXPERIMENT]\n  block until the experiment finishes"));
  BOOST_TEST(!has(out.text, "agents:\n"));
}

BOOST_AUTO_TEST_CASE(commands_before_any_experiment_say_so) {
  TempDir tmp;
  auto out = run_repl(tmp, "top\nwait\nshow 0\n");
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.exit_code == 1);
  BOOST_TEST(has(out.text, "error: no experiment has been submitted yet"));
}

// Attached to a coordinator process: the REPL that loses its coordinator
// says so, reconnects when it is back, and runs the read-only command again.
BOOST_AUTO_TEST_CASE(an_attached_repl_reconnects_to_a_restarted_coordinator) {
  TempDir tmp;
  auto token = tmp.write("token", "repl-test-token-0123456789\n");
  chmod(token.c_str(), 0600);
  int port = free_port();
  auto start_coordinator = [&] {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{cerebro_binary(), "coordinator", "--listen", "127.0.0.1:" + std::to_string(port),
                                 "--state", tmp.file("state"), "--token-file", token},
        tmp.file("coordinator.log"));
  };
  auto coordinator = start_coordinator();
  BOOST_REQUIRE(coordinator->wait_for_log("listening on", 30));
  // The REPL reads from a pipe the test writes to, so the test decides when
  // each command arrives.
  auto log = tmp.file("repl.log");
  FILE* repl = popen((cerebro_binary() + " repl --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " +
                      token + " > " + log + " 2>&1")
                         .c_str(),
                     "we");  // close-on-exec: the coordinators started later must not hold the pipe open
  BOOST_REQUIRE(repl);
  auto read_log = [&] {
    std::ifstream in(log);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto wait_for = [&](const std::string& text, size_t count) {
    for (int i = 0; i < 600; ++i) {
      auto t = read_log();
      size_t n = 0;
      for (auto at = t.find(text); at != std::string::npos; at = t.find(text, at + 1)) ++n;
      if (n >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  fputs("status\n", repl);
  fflush(repl);
  BOOST_REQUIRE_MESSAGE(wait_for("agents:", 1), read_log());
  coordinator->kill_now();
  coordinator = start_coordinator();
  BOOST_REQUIRE(coordinator->wait_for_log("listening on", 30));
  fputs("status\n", repl);
  fflush(repl);
  BOOST_TEST(wait_for("agents:", 2), read_log());
  int rc = pclose(repl);
  auto t = read_log();
  BOOST_TEST_INFO(t);
  BOOST_TEST(has(t, "lost the coordinator at 127.0.0.1:" + std::to_string(port)));
  BOOST_TEST(has(t, "reconnected to the coordinator"));
  BOOST_TEST(WEXITSTATUS(rc) == 0, "the retried status succeeded");
}
