#pragma once
// The detail answers of experiments that have ended, which no longer change: a poll of a finished run of
// many configs is then its cluster entry's lookup and these bytes, not its detail decoded, merged and
// encoded again (docs/BENCHMARKS.md "Python client"). Shared by the HTTP server's threads.

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace cerebro::api {

class EndedAnswers {
 public:
  // Holds at most `capacity` answers; the one kept longest ago goes first.
  explicit EndedAnswers(size_t capacity = 64) : capacity_(capacity) {}
  std::optional<std::string> find(const std::string& experiment) const;
  void keep(const std::string& experiment, std::string body);

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, std::pair<uint64_t, std::string>> answers_;  // by experiment: (when kept, body)
  uint64_t kept_ = 0;
};

}  // namespace cerebro::api
