#pragma once
// Helpers for tests that drive the real `cerebro` executable.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/store/state_store.hpp"
#include "test/support/temp_dir.hpp"

namespace cerebro::e2e {

using cerebro::testing::TempDir;

// A run's unit log as check_mop_invariants reads it: every entry committed,
// a gang's members with their gang id and size (without them a gang's k
// units at once would look like an isolation violation).
inline std::vector<UnitRecord> committed_records(const std::vector<UnitLogEntry>& log) {
  std::vector<UnitRecord> records;
  for (const auto& e : log) {
    records.push_back(
        {e.config, e.partition, e.epoch, e.worker, e.start_s, e.end_s, true, e.gang, e.gang_size, e.worker_end_s()});
    // A pipeline unit occupies its stages' hosts too.
    if (e.pipeline_workers.size() > 1)
      records.back().pipeline_hosts.assign(e.pipeline_workers.begin() + 1, e.pipeline_workers.end());
  }
  return records;
}

struct Output {
  int exit_code = -1;
  std::string text;  // stdout and stderr
};

inline Output run_command(const std::string& command) {
  Output out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

inline std::string cerebro_binary() { return std::string(CEREBRO_BINARY_DIR) + "/tools/cerebro"; }

inline Output run_cerebro(const std::string& args) { return run_command(cerebro_binary() + " " + args); }

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

constexpr const char* fashion_mnist = "/usr/share/datasets/fashion-mnist";

// A small experiment on the first `limit` Fashion-MNIST examples.
inline std::string small_spec(const std::string& space, int epochs = 2, int limit = 2000, int workers = 2) {
  return "[experiment]\nname = \"small\"\nepochs = " + std::to_string(epochs) +
         "\nseed = 11\n[data]\nsource = \"idx\"\npath = \"" + fashion_mnist + "\"\nlimit = " + std::to_string(limit) +
         "\n[cluster]\nworkers = " + std::to_string(workers) + "\n[space]\n" + space;
}

}  // namespace cerebro::e2e
