#include "tools/command_support.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

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

}  // namespace cerebro::cli
