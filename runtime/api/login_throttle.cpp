#include "runtime/api/login_throttle.hpp"

#include <algorithm>

namespace cerebro::api {

LoginThrottle::LoginThrottle(LoginLimits limits) : limits_(limits) {}

int64_t LoginThrottle::retry_after_s(const std::string& client, Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.locked_until <= now) return 0;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(it->second.locked_until - now).count();
  return std::max<int64_t>(1, (left + 999) / 1000);
}

void LoginThrottle::failed(const std::string& client, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!clients_.count(client) && clients_.size() >= limits_.max_clients) forget_stale(now);
  auto& c = clients_[client];
  c.last_seen = now;
  if (c.locked_until > now) return;  // refused without a look at the token: not counted again
  c.failures.push_back(now);
  while (!c.failures.empty() && now - c.failures.front() >= limits_.window) c.failures.pop_front();
  if (static_cast<int>(c.failures.size()) >= limits_.max_failures) {
    c.locked_until = now + limits_.lockout;
    c.failures.clear();
  }
}

void LoginThrottle::succeeded(const std::string& client) {
  std::lock_guard<std::mutex> lock(mutex_);
  clients_.erase(client);
}

void LoginThrottle::forget_stale(Clock::time_point now) {
  for (auto it = clients_.begin(); it != clients_.end();) {
    const auto& c = it->second;
    bool quiet = c.locked_until <= now && (c.failures.empty() || now - c.failures.back() >= limits_.window);
    it = quiet ? clients_.erase(it) : std::next(it);
  }
  // Still full (a flood of addresses): the least recently seen go.
  while (clients_.size() >= limits_.max_clients) {
    auto oldest = std::min_element(clients_.begin(), clients_.end(), [](const auto& a, const auto& b) {
      return a.second.last_seen < b.second.last_seen;
    });
    clients_.erase(oldest);
  }
}

}  // namespace cerebro::api
