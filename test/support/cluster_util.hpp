#pragma once
// A coordinator and agent processes on 127.0.0.1 for cluster tests.

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/e2e_util.hpp"
#include "tools/child_process.hpp"

namespace cerebro::e2e {

inline std::string write_token(const TempDir& tmp, const std::string& name, const std::string& token) {
  auto path = tmp.write(name, token + "\n");
  chmod(path.c_str(), 0600);
  return path;
}

struct Cluster {
  explicit Cluster(const TempDir& dir) : tmp(dir), token(write_token(dir, "token", "s3cret-token-for-tests-0123")) {}

  ChildProcess& start_coordinator(int port, std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> argv{
        cerebro_binary(), "coordinator",     "--listen",     "127.0.0.1:" + std::to_string(port),
        "--state",        tmp.file("state"), "--token-file", token};
    argv.insert(argv.end(), extra.begin(), extra.end());
    coordinator = std::make_unique<ChildProcess>(argv, tmp.file("coordinator.log"), std::move(env));
    return *coordinator;
  }
  ChildProcess& start_agent(const std::string& name, int port, std::vector<std::string> env = {}) {
    return start_agent(name, port, token, std::move(env));
  }
  ChildProcess& start_agent(const std::string& name, int port, const std::string& token_file,
                            std::vector<std::string> env = {}) {
    agents.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{cerebro_binary(), "agent", "--join", "127.0.0.1:" + std::to_string(port),
                                 "--token-file", token_file, "--workers", "1", "--data-dir", tmp.file("data-" + name),
                                 "--name", name},
        tmp.file("agent-" + name + ".log"), std::move(env)));
    return *agents.back();
  }
  // The test stops, with every log, unless the coordinator listens on
  // `port` within 20 s.
  void wait_listening(int port) const {
    BOOST_REQUIRE_MESSAGE(coordinator->wait_for_log("listening on 127.0.0.1:" + std::to_string(port), 20), logs());
  }
  // ... unless every agent named joined within 60 s.
  void wait_joined(const std::vector<std::string>& names) const {
    for (const auto& name : names)
      BOOST_REQUIRE_MESSAGE(coordinator->wait_for_log("agent " + name + " joined", 60), logs());
  }
  // A coordinator on `port` and the agents named (one worker each), listening and joined.
  void start_with_agents(int port, const std::vector<std::string>& names) {
    start_coordinator(port);
    wait_listening(port);
    for (const auto& name : names) start_agent(name, port);
    wait_joined(names);
  }
  // What a client passes to reach this cluster: " --cluster ... --token-file ...".
  std::string client_flags(int port) const {
    return " --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + token;
  }
  std::string logs() const {
    std::string out = coordinator ? "--- coordinator\n" + coordinator->log() : "";
    for (const auto& a : agents) out += "--- agent\n" + a->log();
    return out;
  }

  const TempDir& tmp;
  std::string token;
  std::unique_ptr<ChildProcess> coordinator;
  std::vector<std::unique_ptr<ChildProcess>> agents;
};

// The most units a client's progress lines have reported done.
inline int units_reported(const std::string& log) {
  static const std::regex progress(R"((\d+)/(\d+) units)");
  int most = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), progress); it != std::sregex_iterator(); ++it)
    most = std::max(most, std::stoi((*it)[1]));
  return most;
}

// Whether the client reported `units` done within `seconds`.
inline bool wait_for_units(const ChildProcess& client, int units, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (units_reported(client.log()) >= units) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The folder of the coordinator's only experiment under its state folder `state`.
inline std::string experiment_dir(const std::string& state) {
  for (const auto& e : std::filesystem::directory_iterator(state + "/experiments")) return e.path().string();
  return {};
}

}  // namespace cerebro::e2e
