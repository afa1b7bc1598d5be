#include "runtime/base/time_format.hpp"

namespace cerebro {

std::string compact_local_timestamp(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string compact_local_timestamp_now() { return compact_local_timestamp(std::time(nullptr)); }

}  // namespace cerebro
