#include "tools/command_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

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

std::string timestamp() {
  auto now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

}  // namespace cerebro::cli
