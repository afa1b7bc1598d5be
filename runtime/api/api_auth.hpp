#pragma once
// Who may use the HTTP API: every request carries the token (the cluster's,
// or the one-time token an embedded --ui prints), either as
// `Authorization: Bearer TOKEN` or as a session cookie the login page sets.
// Sessions are random ids known only to this process (a restart logs
// everybody out); tokens are compared in constant time.
//
// An embedded --ui prints a link with a separate one-time login token
// (OneTimeToken): it opens one browser session and is then spent, so a link
// found later in a browser's history, a proxy's log or a screenshot opens
// nothing; unused it expires after kOneTimeTokenLifetime. The API token (for
// Bearer and the login page) is printed beside it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace cerebro::api {

constexpr const char* kSessionCookie = "cerebro_session";
// Sessions kept at once; the oldest is dropped beyond this.
constexpr size_t kMaxSessions = 1024;

// A random token of `bytes` bytes as hex (std::random_device).
std::string random_token(size_t bytes = 24);

// Equal contents, in time independent of where they differ.
bool same_token(const std::string& presented, const std::string& expected);

// The token of an "Authorization: Bearer TOKEN" header; nullopt for any other form.
std::optional<std::string> bearer_token(const std::string& authorization);

// The value of cookie `name` in a Cookie header ("a=1; b=2").
std::optional<std::string> cookie_value(const std::string& cookie_header, const std::string& name);

// The Set-Cookie header value for a session (HttpOnly, SameSite=Strict, and
// Secure when served over TLS).
std::string session_cookie(const std::string& session, bool secure);

// Thread-safe: the server's threads check and open sessions concurrently.
class SessionTable {
 public:
  std::string open();
  bool valid(const std::string& session) const;
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string> sessions_;
  std::set<std::pair<uint64_t, std::string>> order_;  // (opened, session): the oldest goes first
  uint64_t next_ = 0;
};

// How long an unused one-time login token stays valid.
constexpr std::chrono::minutes kOneTimeTokenLifetime{60};

// A login token that works once. Thread-safe.
class OneTimeToken {
 public:
  using Clock = std::chrono::steady_clock;
  OneTimeToken(std::string token, Clock::time_point expires);

  enum class Outcome { accepted, wrong, spent, expired };
  // `presented` against the token at `now`: accepted once (then spent);
  // a wrong token does not spend it.
  Outcome redeem(const std::string& presented, Clock::time_point now);
  const std::string& token() const { return token_; }

 private:
  const std::string token_;
  const Clock::time_point expires_;
  mutable std::mutex mutex_;
  bool spent_ = false;
};

// How a request authenticated, if at all.
enum class Credential { none, bearer, session };

// Checks the Authorization and Cookie headers of one request against the token.
Credential authenticate(const std::string& authorization, const std::string& cookie_header, const std::string& token,
                        const SessionTable& sessions);

}  // namespace cerebro::api
