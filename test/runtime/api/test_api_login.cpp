// Logging in (runtime/api): the one-time token of an embedded --ui's link and
// the throttle on wrong tokens, with the time passed in.
#define BOOST_TEST_MODULE api_login
#include <boost/test/unit_test.hpp>

#include "runtime/api/api_auth.hpp"
#include "runtime/api/login_throttle.hpp"

using namespace cerebro::api;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(the_links_token_logs_in_once_and_expires_unused) {
  const auto t0 = OneTimeToken::Clock::now();
  OneTimeToken link("link-token-0123", t0 + kOneTimeTokenLifetime);
  using Outcome = OneTimeToken::Outcome;
  BOOST_TEST((link.redeem("wrong", t0) == Outcome::wrong));
  BOOST_TEST((link.redeem("", t0) == Outcome::wrong));
  BOOST_TEST((link.redeem("link-token-0123", t0 + 1s) == Outcome::accepted), "a wrong token does not spend it");
  BOOST_TEST((link.redeem("link-token-0123", t0 + 2s) == Outcome::spent));
  BOOST_TEST((link.redeem("link-token-0123", t0 + 3s) == Outcome::spent));

  OneTimeToken unused("link-token-4567", t0 + kOneTimeTokenLifetime);
  BOOST_TEST((unused.redeem("link-token-4567", t0 + kOneTimeTokenLifetime) == Outcome::expired));
  BOOST_TEST((unused.redeem("link-token-4567", t0 + kOneTimeTokenLifetime - 1s) == Outcome::accepted));
  BOOST_TEST((kOneTimeTokenLifetime == 60min), "docs/API.md says an hour");
}

BOOST_AUTO_TEST_CASE(five_wrong_tokens_in_a_minute_lock_the_address_out_for_a_minute) {
  LoginThrottle throttle;
  const auto t0 = LoginThrottle::Clock::now();
  for (int i = 0; i < 4; ++i) {
    throttle.failed("10.0.0.1", t0 + i * 1s);
    BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + i * 1s) == 0);
  }
  throttle.failed("10.0.0.1", t0 + 4s);
  BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + 4s) == 60);
  BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + 34s) == 30);
  BOOST_TEST(throttle.retry_after_s("10.0.0.2", t0 + 4s) == 0, "another address is not locked out");
  // Attempts while locked out are not looked at and do not lengthen it.
  throttle.failed("10.0.0.1", t0 + 10s);
  BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + 63s) == 1);
  BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + 64s) == 0);
  // After the lockout the count starts again.
  throttle.failed("10.0.0.1", t0 + 65s);
  BOOST_TEST(throttle.retry_after_s("10.0.0.1", t0 + 65s) == 0);
}

BOOST_AUTO_TEST_CASE(failures_spread_wider_than_the_window_or_followed_by_a_success_do_not_lock) {
  LoginThrottle throttle;
  const auto t0 = LoginThrottle::Clock::now();
  for (int i = 0; i < 10; ++i) throttle.failed("a", t0 + i * 20s);  // at most three within any minute
  BOOST_TEST(throttle.retry_after_s("a", t0 + 200s) == 0);
  for (int i = 0; i < 4; ++i) throttle.failed("b", t0 + i * 1s);
  throttle.succeeded("b");
  throttle.failed("b", t0 + 5s);
  BOOST_TEST(throttle.retry_after_s("b", t0 + 5s) == 0, "a right token clears the count");
}

BOOST_AUTO_TEST_CASE(the_throttle_remembers_a_bounded_number_of_addresses) {
  LoginLimits limits;
  limits.max_clients = 8;
  LoginThrottle throttle(limits);
  const auto t0 = LoginThrottle::Clock::now();
  for (int i = 0; i < 5; ++i) throttle.failed("locked", t0);
  BOOST_TEST(throttle.retry_after_s("locked", t0) == 60);
  for (int i = 0; i < 100; ++i) throttle.failed("flood-" + std::to_string(i), t0 + 1s + i * 1ms);
  // A flood of addresses pushes the oldest out; the lock of a recent one holds while it is remembered.
  BOOST_TEST(throttle.retry_after_s("flood-99", t0 + 2s) == 0);
  for (int i = 0; i < 4; ++i) throttle.failed("flood-99", t0 + 2s);
  BOOST_TEST(throttle.retry_after_s("flood-99", t0 + 2s) == 60);
}
