#include "runtime/cluster/peer_checks.hpp"

#include <fmt/format.h>

namespace cerebro {

Status validate_name(const std::string& what, const std::string& name) {
  if (name.empty() || name.size() > 64)
    return Status::invalid_argument(fmt::format("{} must have 1 to 64 characters, got {}", what, name.size()));
  if (name[0] == '.') return Status::invalid_argument(fmt::format("{} \"{}\" must not start with '.'", what, name));
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return Status::invalid_argument(
          fmt::format("{} \"{}\" may only contain letters, digits, '.', '_' and '-'", what, name));
  }
  return Status::ok_status();
}

Status validate_resources(const agent_resources& r) {
  if (auto s = validate_name("agent name", r.name); !s.ok()) return s;
  if (r.workers < 1 || r.workers > 1024)
    return Status::invalid_argument(fmt::format("workers must be 1..1024, got {}", r.workers));
  if (r.cores < 0 || r.cores > 65536) return Status::invalid_argument(fmt::format("cores out of range: {}", r.cores));
  if (r.memory_bytes < 0) return Status::invalid_argument("memory must not be negative");
  if (!(r.speed >= 0) || r.speed > 1e12) return Status::invalid_argument("speed out of range");
  return Status::ok_status();
}

bool tokens_equal(const std::string& presented, const std::string& expected) {
  // Walk the expected token's length always; fold in the length difference.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    unsigned char a = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= static_cast<unsigned char>(a ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0 && !expected.empty();
}

}  // namespace cerebro
