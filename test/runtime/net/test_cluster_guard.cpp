#define BOOST_TEST_MODULE cluster_guard
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <fstream>
#include <string>

#include "test/support/cluster_util.hpp"
#include "test/support/e2e_util.hpp"
#include "test/runtime/net/raw_tcp.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::test;

namespace {

// CAF 0.17's BASP client handshake (operation 1, version 3 as operation data)
// is a header CAF accepts from a peer it does not know yet; claiming 2 GiB
// makes an unguarded middleman allocate 2 GiB for its payload.
constexpr uint8_t kClientHandshake = 1;
constexpr uint64_t kBaspVersion = 3;
constexpr uint32_t kTwoGiB = 0x80000000u;

// The process's resident memory in KiB, from /proc/<pid>/status (VmRSS).
long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_oversized_frame_from_a_raw_peer_is_refused_before_allocation) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("listening on", 20), cluster.logs());
  long before = resident_kib(coordinator.pid());
  BOOST_REQUIRE(before > 0);

  int fd = connect_loopback(static_cast<uint16_t>(port));
  BOOST_REQUIRE(fd >= 0);
  // The first payload bytes too: CAF sizes its read buffer for the whole
  // payload when the next bytes arrive after the header.
  auto frame_start = basp_header(kClientHandshake, kTwoGiB, kBaspVersion);
  frame_start.resize(frame_start.size() + 4096, 0x5a);
  BOOST_REQUIRE(send_bytes(fd, frame_start));
  BOOST_TEST(closed_within(fd, 5), "the connection stayed open");
  ::close(fd);
  BOOST_TEST(coordinator.wait_for_log("refused a message of 2147483648 bytes from 127.0.0.1:", 5), cluster.logs());
  long after = resident_kib(coordinator.pid());
  BOOST_TEST(after - before < 256 * 1024, "resident memory grew from " << before << " to " << after << " KiB");

  cluster.start_agent("node1", port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent node1 joined", 60), cluster.logs());
  auto status = run_cerebro("status --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + cluster.token);
  BOOST_TEST(status.exit_code == 0, status.text);
  BOOST_TEST(status.text.find("node1") != std::string::npos, status.text);
}

BOOST_AUTO_TEST_CASE(max_message_mb_sets_the_limit_and_is_checked) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port, {"--max-message-mb", "1"});
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("listening on", 20), cluster.logs());
  int fd = connect_loopback(static_cast<uint16_t>(port));
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(send_bytes(fd, basp_header(kClientHandshake, 1024 * 1024 + 1, kBaspVersion)));
  BOOST_TEST(closed_within(fd, 5), "the connection stayed open");
  ::close(fd);
  BOOST_TEST(coordinator.wait_for_log("refused a message of 1048577 bytes", 5), cluster.logs());
  BOOST_TEST(coordinator.log().find("limit 1048576 bytes") != std::string::npos, cluster.logs());

  auto zero =
      run_cerebro("coordinator --max-message-mb 0 --state " + tmp.file("state0") + " --token-file " + cluster.token);
  BOOST_TEST(zero.exit_code != 0);
  BOOST_TEST(zero.text.find("--max-message-mb") != std::string::npos, zero.text);
}
