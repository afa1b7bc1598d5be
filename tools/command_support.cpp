#include "tools/command_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/base/time_format.hpp"

namespace cerebro::cli {

int fail(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  return 1;
}

void leave_now(int rc) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(rc);
}

std::string timestamp() { return compact_local_timestamp_now(); }

Result<std::string> resolve_run_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::not_found(fmt::format("{}: no such run directory", dir));
  if (fs::is_directory(fs::path(dir) / "state", ec)) return dir;
  std::vector<std::string> runs;
  for (const auto& entry : fs::directory_iterator(fs::path(dir) / "experiments", ec))
    if (fs::is_directory(entry.path() / "state", ec)) runs.push_back(entry.path().string());
  std::sort(runs.begin(), runs.end());
  if (runs.size() == 1) return runs.front();
  if (runs.empty())
    return Status::not_found(
        fmt::format("{}: not a run directory (it has neither a state/ store nor experiments/<id>/state)", dir));
  return Status::invalid_argument(fmt::format("{} holds the run directories of {} experiments; name one: {}", dir,
                                              runs.size(), fmt::join(runs, ", ")));
}

}  // namespace cerebro::cli
