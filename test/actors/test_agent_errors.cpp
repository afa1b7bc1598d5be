// A node agent's refusals reach whoever asked with the code that says what
// happened, not as text: a shard that fails its checksum is corruption (the
// same as a damaged state), a partition or source it does not have not_found,
// a malformed placement invalid_argument.
#define BOOST_TEST_MODULE agent_errors
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <string>

#include "actors/actors.hpp"
#include "actors/system_config.hpp"
#include "runtime/net/error_category.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;

namespace {

// An agent without workers and a shard server for experiment "e" serving
// `file` (100 bytes) from the source directory.
struct Node {
  TempDir source_dir, agent_dir;
  cerebro_system_config config{system_role::embedded};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  agent_actor agent;
  shard_server_actor server;

  explicit Node(const std::string& file = "part-0000.bin") {
    std::ofstream(source_dir.file(file), std::ios::binary) << std::string(100, 'a');
    agent_config a;
    a.name = "node-a";
    a.data_dir = agent_dir.path().string();
    a.workers = 0;
    agent = spawn_agent(system, a).agent;
    server = spawn_shard_server(system, "e", source_dir.path().string(), {file});
  }
  ~Node() {
    self->send_exit(agent, caf::exit_reason::user_shutdown);
    self->send_exit(server, caf::exit_reason::user_shutdown);
  }

  shard_placement placement(int64_t bytes, const std::string& checksum) const {
    shard_placement p;
    p.experiment = "e";
    p.partition = 0;
    p.file = "part-0000.bin";
    p.bytes = bytes;
    p.checksum = checksum;
    p.source = server;
    return p;
  }

  // What the agent answers a placement: ok when it holds the shard.
  Status place(const shard_placement& p) {
    Status answer = Status::internal("no answer");
    self->request(agent, std::chrono::seconds(30), place_atom::value, p)
        .receive([&](bool) { answer = Status::ok_status(); }, [&](const caf::error& e) { answer = to_status(e); });
    return answer;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_shard_failing_its_checksum_reaches_the_requester_as_corruption) {
  Node node;
  // The source's 100 bytes are not the shard whose checksum the placement names.
  Status placed = node.place(node.placement(100, "crc32:00000000"));
  BOOST_TEST(placed.is_corruption(), to_string(placed.code()) << ": " << placed.message());
  BOOST_TEST(placed.message() == "part-0000.bin: received shard does not match checksum crc32:00000000");
}

BOOST_AUTO_TEST_CASE(a_source_shorter_than_its_placement_is_corruption_with_the_fetch_named) {
  Node node;
  // The second chunk (at offset 100) is not there: the source's code travels on.
  Status placed = node.place(node.placement(200, "crc32:00000000"));
  BOOST_TEST(placed.is_corruption(), to_string(placed.code()) << ": " << placed.message());
  BOOST_TEST(placed.message() == "part-0000.bin: fetch failed: part-0000.bin: nothing at offset 100");
}

BOOST_AUTO_TEST_CASE(what_the_node_does_not_have_is_not_found_and_a_bad_placement_invalid) {
  Node node;
  auto no_source = node.placement(100, "crc32:00000000");
  no_source.source = shard_server_actor{};
  Status placed = node.place(no_source);
  BOOST_TEST(placed.is_not_found(), placed.message());
  BOOST_TEST(placed.message() == "part-0000.bin: no source to fetch it from");

  Status borrowed = Status::internal("no answer");
  node.self->request(node.agent, std::chrono::seconds(30), borrow_atom::value, std::string("e"), PartitionId{3})
      .receive([&](const partition_lease&) { borrowed = Status::ok_status(); },
               [&](const caf::error& e) { borrowed = to_status(e); });
  BOOST_TEST(borrowed.is_not_found(), borrowed.message());
  BOOST_TEST(borrowed.message() == "node node-a holds no partition 3 of e");

  Status malformed = node.place(node.placement(100, "md5:abc"));
  BOOST_TEST(malformed.is_invalid_argument(), malformed.message());
}
