#pragma once
// The project's one timestamp format, for names a person sorts and reads:
// run directories and experiment ids ("20260314-092653", local time).

#include <ctime>
#include <string>

namespace cerebro {

// `t` in local time as "YYYYmmdd-HHMMSS".
std::string compact_local_timestamp(std::time_t t);
// The current time, as compact_local_timestamp formats it.
std::string compact_local_timestamp_now();

}  // namespace cerebro
