#pragma once
// Guessing the token at the login page is slowed down per client address:
// after `max_failures` wrong tokens within `window`, the address may not try
// again for `lockout` (the server answers 429 with Retry-After and does not
// look at the token). A right token clears the address's failures. Bearer
// requests are not throttled: a wrong one is refused (401) and changes nothing.
//
// Plain code with the time passed in (tests need no clock); thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace cerebro::api {

struct LoginLimits {
  int max_failures = 5;
  std::chrono::seconds window{60};
  std::chrono::seconds lockout{60};
  // Addresses remembered at once; the oldest are forgotten beyond this.
  size_t max_clients = 4096;
};

class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LoginThrottle(LoginLimits limits = {});

  // Whole seconds `client` must wait before it may try a token (0: now).
  int64_t retry_after_s(const std::string& client, Clock::time_point now) const;
  // A wrong token from `client`: may start its lockout.
  void failed(const std::string& client, Clock::time_point now);
  void succeeded(const std::string& client);

  const LoginLimits& limits() const { return limits_; }

 private:
  struct Client {
    std::deque<Clock::time_point> failures;  // within the window
    Clock::time_point locked_until{};
    Clock::time_point last_seen{};
  };
  void forget_stale(Clock::time_point now);

  const LoginLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, Client> clients_;
};

}  // namespace cerebro::api
