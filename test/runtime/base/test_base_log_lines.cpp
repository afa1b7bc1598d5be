#define BOOST_TEST_MODULE base_log_lines
// The process's log-line sink and the LogBook the REPL keeps its lines in.
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "runtime/base/log_lines.hpp"

using namespace cerebro;

namespace {

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_installed_sink_receives_every_line_until_removed) {
  std::vector<std::string> got;
  set_log_sink([&](const std::string& line) { got.push_back(line); });
  emit_log_line("coordinator: one");
  std::thread other([] { emit_log_line("agent a: two"); });
  other.join();
  set_log_sink(nullptr);
  emit_log_line("to stderr, not the sink");
  BOOST_TEST(got == (std::vector<std::string>{"coordinator: one", "agent a: two"}));
}

BOOST_AUTO_TEST_CASE(a_log_book_wakes_its_reader_hands_each_line_once_and_keeps_the_newest) {
  LogBook book(3);
  BOOST_REQUIRE(book.wake_fd() >= 0);
  BOOST_TEST(!readable(book.wake_fd()));
  BOOST_TEST(book.take_new().empty());
  book.add("first");
  BOOST_TEST(readable(book.wake_fd()));
  book.add("second");
  auto taken = book.take_new();
  BOOST_REQUIRE(taken.size() == 2u);
  // Stamped with the local time of day.
  BOOST_TEST(std::regex_match(taken[0], std::regex("[0-9]{2}:[0-9]{2}:[0-9]{2} first")), taken[0]);
  BOOST_TEST(taken[1].substr(9) == "second");
  BOOST_TEST(!readable(book.wake_fd()));
  BOOST_TEST(book.take_new().empty());
  // It keeps three: the oldest go; lines not yet taken beyond that are lost too.
  for (auto l : {"3", "4", "5", "6"}) book.add(l);
  auto last = book.last(10);
  BOOST_REQUIRE(last.size() == 3u);
  BOOST_TEST(last.front().substr(9) == "4");
  BOOST_TEST(last.back().substr(9) == "6");
  BOOST_TEST(book.take_new().size() == 3u);
  BOOST_TEST(book.last(1).size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_host_name_is_never_empty) { BOOST_TEST(!host_name().empty()); }
