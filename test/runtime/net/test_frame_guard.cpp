#define BOOST_TEST_MODULE frame_guard
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime/net/basp_frame_reader.hpp"
#include "runtime/net/frame_guard.hpp"
#include "test/runtime/net/raw_tcp.hpp"

using namespace cerebro;
using namespace cerebro::test;

namespace {

constexpr uint64_t kLimit = 1000;

std::vector<unsigned char> frame(uint32_t payload_len) {
  auto bytes = basp_header(2, payload_len, 0);
  for (uint32_t i = 0; i < payload_len; ++i) bytes.push_back(static_cast<unsigned char>(i * 7));
  return bytes;
}

// A loopback server standing in for the middleman: echoes every byte back.
struct Echo {
  int listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint16_t port = 0;
  std::thread server;
  Echo() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::bind(listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    BOOST_REQUIRE(::listen(listen_fd, 8) == 0);
    socklen_t length = sizeof address;
    getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
    server = std::thread([this] {
      std::vector<std::thread> connections;
      for (int fd; (fd = ::accept(listen_fd, nullptr, nullptr)) >= 0;) {
        connections.emplace_back([fd] {
          char buffer[65536];
          for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
            if (::send(fd, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
          ::close(fd);
        });
      }
      for (auto& c : connections) c.join();
    });
  }
  ~Echo() {
    ::shutdown(listen_fd, SHUT_RDWR);
    server.join();
    ::close(listen_fd);
  }
};

struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  FrameGuardLog sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex);
      lines.push_back(line);
    };
  }
  std::string all() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
  }
};

// A guard with the given limit in front of an echo server.
struct GuardedEcho {
  explicit GuardedEcho(uint64_t limit) {
    auto started = FrameGuard::start({"127.0.0.1", 0, echo.port, limit}, log.sink());
    BOOST_REQUIRE_MESSAGE(started.ok(), started.error());
    guard = std::move(started).value();
  }
  int connect() {
    int fd = connect_loopback(guard->port());
    BOOST_REQUIRE(fd >= 0);
    return fd;
  }
  Echo echo;
  LogLines log;
  std::unique_ptr<FrameGuard> guard;
};

}  // namespace

BOOST_AUTO_TEST_CASE(payload_len_is_read_big_endian_at_offset_4) {
  auto header = basp_header(1, 0x80000000u, 3);
  BOOST_TEST(basp_payload_len(header.data()) == 0x80000000u);
  header = basp_header(2, 0x01020304u, 0xffffffffffffffffull);
  BOOST_TEST(basp_payload_len(header.data()) == 0x01020304u);
}

BOOST_AUTO_TEST_CASE(frames_split_anywhere_are_followed_and_payloads_skipped) {
  std::vector<unsigned char> stream;
  for (uint32_t len : {0u, 5u, 1000u, 0u, 31u, 32u, 33u}) {
    auto f = frame(len);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  // Byte by byte, then in uneven chunks: the reader must see the same frames.
  BaspFrameReader one_byte(kLimit);
  for (auto byte : stream) BOOST_REQUIRE(!one_byte.feed(&byte, 1));
  BOOST_TEST(one_byte.frames() == 7u);
  BaspFrameReader chunks(kLimit);
  for (size_t at = 0, step = 1; at < stream.size(); at += step, step = step * 3 % 97 + 1)
    BOOST_REQUIRE(!chunks.feed(stream.data() + at, std::min(step, stream.size() - at)));
  BOOST_TEST(chunks.frames() == 7u);
}

BOOST_AUTO_TEST_CASE(a_header_over_the_limit_is_refused_with_its_claim) {
  BaspFrameReader reader(kLimit);
  auto at_limit = frame(kLimit);
  BOOST_TEST(!reader.feed(at_limit.data(), at_limit.size()));
  auto over = basp_header(2, kLimit + 1, 0);
  // Split inside payload_len: nothing is decided before the header is whole.
  BOOST_TEST(!reader.feed(over.data(), 6));
  auto refused = reader.feed(over.data() + 6, over.size() - 6);
  BOOST_REQUIRE(refused.has_value());
  BOOST_TEST(*refused == kLimit + 1);
  // Stuck: later bytes do not clear the refusal.
  auto more = frame(0);
  BOOST_TEST(reader.feed(more.data(), more.size()).value_or(0) == kLimit + 1);
}

BOOST_AUTO_TEST_CASE(the_guard_relays_both_ways_unchanged) {
  // A payload many relay chunks long, under a limit just above it.
  constexpr uint32_t kLarge = 3 * 1024 * 1024;
  GuardedEcho relay(kLarge + 1);
  int fd = relay.connect();
  std::vector<unsigned char> sent;
  for (uint32_t len : {0u, 1000u, kLarge, 7u}) {
    auto f = frame(len);
    sent.insert(sent.end(), f.begin(), f.end());
  }
  // Send from another thread: the echo flows back while we still send.
  std::thread sender([&] { BOOST_CHECK(send_bytes(fd, sent)); });
  auto echoed = receive_bytes(fd, sent.size(), 20);
  sender.join();
  BOOST_TEST((echoed == sent));
  BOOST_TEST(relay.log.all().empty());
  ::close(fd);
}

BOOST_AUTO_TEST_CASE(an_oversized_frame_closes_the_connection_and_is_logged) {
  GuardedEcho relay(kLimit);
  int fd = relay.connect();
  BOOST_REQUIRE(send_bytes(fd, basp_header(1, 0x80000000u, 3)));
  BOOST_TEST(closed_within(fd, 5));
  ::close(fd);
  auto lines = relay.log.all();
  BOOST_TEST(lines.find("refused a message of 2147483648 bytes from 127.0.0.1:") != std::string::npos, lines);
  // The guard keeps serving other peers.
  int next = relay.connect();
  auto f = frame(10);
  BOOST_REQUIRE(send_bytes(next, f));
  BOOST_TEST((receive_bytes(next, f.size(), 10) == f));
  ::close(next);
}

BOOST_AUTO_TEST_CASE(a_taken_port_gives_cannot_listen_and_shutdown_closes_open_connections) {
  Echo echo;
  auto first = FrameGuard::start({"127.0.0.1", 0, echo.port, kLimit}, nullptr);
  BOOST_REQUIRE_MESSAGE(first.ok(), first.error());
  auto port = first.value()->port();
  auto second = FrameGuard::start({"127.0.0.1", port, echo.port, kLimit}, nullptr);
  BOOST_REQUIRE(!second.ok());
  BOOST_TEST(second.error() == "cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");

  int fd = connect_loopback(port);
  BOOST_REQUIRE(fd >= 0);
  auto f = frame(3);
  BOOST_REQUIRE(send_bytes(fd, f));
  BOOST_REQUIRE((receive_bytes(fd, f.size(), 10) == f));
  auto started = std::chrono::steady_clock::now();
  first = Status::internal("dropped");  // destroys the guard with the connection open
  BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(3)));
  BOOST_TEST(closed_within(fd, 5));
  ::close(fd);
}

// The guard writes to peers that may have left: that must fail the write, not
// raise a SIGPIPE that ends the process.
BOOST_AUTO_TEST_CASE(peers_leaving_mid_transfer_do_not_end_the_process) {
  GuardedEcho relay(8 * 1024 * 1024);
  auto large = frame(4 * 1024 * 1024);
  for (int round = 0; round < 5; ++round) {
    int fd = relay.connect();
    std::thread sender([&] { send_bytes(fd, large); });
    receive_bytes(fd, 64 * 1024, 5);  // the echo is flowing back
    ::shutdown(fd, SHUT_RDWR);
    sender.join();
    ::close(fd);
  }
  int next = relay.connect();
  auto f = frame(10);
  BOOST_REQUIRE(send_bytes(next, f));
  BOOST_TEST((receive_bytes(next, f.size(), 10) == f));
  ::close(next);
}

// A relay splices payloads past the reader (skip_payload) and shows
// it only the headers; the frame count and the next header's check must be
// the same as when every byte is fed.
BOOST_AUTO_TEST_CASE(skipped_payloads_keep_the_frame_boundaries) {
  auto first = frame(100), second = frame(kLimit + 1);
  BaspFrameReader reader(kLimit);
  BOOST_REQUIRE(!reader.feed(first.data(), kBaspHeaderSize + 10));
  BOOST_TEST(reader.payload_left() == 90u);
  reader.skip_payload(90);
  BOOST_TEST(reader.payload_left() == 0u);
  BOOST_TEST(reader.frames() == 1u);
  BOOST_TEST(reader.feed(second.data(), kBaspHeaderSize).value_or(0) == kLimit + 1);
}

// Large payloads cross the relay spliced; an oversized header right after one
// is still refused, and the large frame before it arrives intact.
BOOST_AUTO_TEST_CASE(an_oversized_frame_after_a_spliced_payload_is_refused) {
  constexpr uint32_t kLarge = 2 * 1024 * 1024 + 13;
  GuardedEcho relay(kLarge);
  int fd = relay.connect();
  auto large = frame(kLarge);
  std::thread sender([&] { send_bytes(fd, large); });
  auto echoed = receive_bytes(fd, large.size(), 20);
  sender.join();
  BOOST_TEST((echoed == large));
  BOOST_REQUIRE(send_bytes(fd, basp_header(1, kLarge + 1, 3)));
  BOOST_TEST(closed_within(fd, 5));
  ::close(fd);
  auto lines = relay.log.all();
  BOOST_TEST(lines.find(fmt::format("refused a message of {} bytes", kLarge + 1)) != std::string::npos, lines);
}
