#include "runtime/api/api_auth.hpp"

#include <algorithm>
#include <random>

#include <fmt/format.h>

namespace cerebro::api {

std::string random_token(size_t bytes) {
  std::random_device device;
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", device() & 0xff);
  return out;
}

bool same_token(const std::string& presented, const std::string& expected) {
  // Every byte of the longer one is looked at: the time says nothing of where they differ.
  size_t n = std::max(presented.size(), expected.size());
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char a = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    unsigned char b = i < expected.size() ? static_cast<unsigned char>(expected[i]) : 0;
    diff |= a ^ b;
  }
  return diff == 0 && !expected.empty();
}

std::optional<std::string> bearer_token(const std::string& authorization) {
  const std::string scheme = "Bearer ";
  if (authorization.size() <= scheme.size() || authorization.compare(0, scheme.size(), scheme) != 0)
    return std::nullopt;
  auto token = authorization.substr(scheme.size());
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.empty()) return std::nullopt;
  return token;
}

std::optional<std::string> cookie_value(const std::string& cookie_header, const std::string& name) {
  size_t pos = 0;
  while (pos < cookie_header.size()) {
    auto end = cookie_header.find(';', pos);
    if (end == std::string::npos) end = cookie_header.size();
    auto pair = cookie_header.substr(pos, end - pos);
    auto first = pair.find_first_not_of(' ');
    if (first != std::string::npos) pair = pair.substr(first);
    auto eq = pair.find('=');
    if (eq != std::string::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    pos = end + 1;
  }
  return std::nullopt;
}

std::string session_cookie(const std::string& session, bool secure) {
  return fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict{}", kSessionCookie, session, secure ? "; Secure" : "");
}

std::string SessionTable::open() {
  auto session = random_token(24);
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_.insert(session);
  order_.insert({next_++, session});
  while (sessions_.size() > kMaxSessions) {
    sessions_.erase(order_.begin()->second);
    order_.erase(order_.begin());
  }
  return session;
}

bool SessionTable::valid(const std::string& session) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.count(session) > 0;
}

size_t SessionTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

OneTimeToken::OneTimeToken(std::string token, Clock::time_point expires)
    : token_(std::move(token)), expires_(expires) {}

OneTimeToken::Outcome OneTimeToken::redeem(const std::string& presented, Clock::time_point now) {
  if (!same_token(presented, token_)) return Outcome::wrong;
  std::lock_guard<std::mutex> lock(mutex_);
  if (spent_) return Outcome::spent;
  if (now >= expires_) return Outcome::expired;
  spent_ = true;
  return Outcome::accepted;
}

Credential authenticate(const std::string& authorization, const std::string& cookie_header, const std::string& token,
                        const SessionTable& sessions) {
  if (auto bearer = bearer_token(authorization); bearer && same_token(*bearer, token)) return Credential::bearer;
  if (auto session = cookie_value(cookie_header, kSessionCookie); session && sessions.valid(*session))
    return Credential::session;
  return Credential::none;
}

}  // namespace cerebro::api
