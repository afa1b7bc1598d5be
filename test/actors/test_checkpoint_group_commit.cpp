// The checkpoint actor commits the units queued in its mailbox together, in
// one synced batch. Whatever it groups, no unit may be lost or
// reordered, each answer must be its own unit's entry, and a request after a
// commit must see it.
#define BOOST_TEST_MODULE checkpoint_group_commit
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <random>

#include "actors/actors.hpp"
#include "actors/system_config.hpp"

using namespace cerebro;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("cerebro-group-" + std::to_string(std::random_device{}()));
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

unit_result result_of(ConfigId config, PartitionId partition, int32_t epoch) {
  unit_result r;
  r.config = config;
  r.partition = partition;
  r.epoch = epoch;
  r.status = UnitStatus::ok;
  r.examples = 100 + config;
  // Large enough that a batch of them is a real write, distinct per unit.
  r.state = std::string(300 * 1000, static_cast<char>('a' + config)) + std::to_string(epoch * 10 + partition);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(commits_sent_together_are_all_durable_in_order_and_each_answered_with_its_own_entry) {
  TempDir dir;
  std::shared_ptr<StateStore> store = StateStore::open(dir.path.string(), true).value();
  constexpr int kConfigs = 6, kRounds = 3;
  for (ConfigId c = 0; c < kConfigs; ++c) BOOST_REQUIRE(store->put_initial_state(c, "init").ok());
  {
    cerebro_system_config config(system_role::embedded);
    caf::actor_system system(config);
    auto checkpoint = spawn_checkpoint(system, store);
    caf::scoped_actor self(system);
    // Every round sends all configs' commits at once (they queue up behind
    // each other and are grouped), then reads a state: it must see them.
    std::vector<unit_result> sent;
    std::vector<UnitLogEntry> answered(kConfigs * kRounds);
    for (int round = 0; round < kRounds; ++round) {
      std::vector<caf::response_handle<caf::blocking_actor, caf::detail::type_list<UnitLogEntry>, true>> handles;
      for (ConfigId c = 0; c < kConfigs; ++c) {
        auto r = result_of(c, round % 2, round / 2);
        sent.push_back(r);
        handles.push_back(self->request(checkpoint, caf::infinite, commit_atom::value, r, uint64_t{7}, double(round),
                                        double(round) + 0.5));
      }
      for (ConfigId c = 0; c < kConfigs; ++c)
        handles[static_cast<size_t>(c)].receive(
            [&](const UnitLogEntry& e) { answered[static_cast<size_t>(round * kConfigs + c)] = e; },
            [&](const caf::error& e) { BOOST_FAIL("commit failed: " << caf::to_string(e)); });
      self->request(checkpoint, caf::infinite, latest_atom::value, ConfigId{kConfigs - 1})
          .receive([&](const StateBytes& s) { BOOST_TEST(s == sent.back().state); },
                   [&](const caf::error& e) { BOOST_FAIL("latest failed: " << caf::to_string(e)); });
    }
    for (size_t i = 0; i < sent.size(); ++i) {
      BOOST_TEST(answered[i].seq == static_cast<int64_t>(i) + 1);  // the order sent
      BOOST_TEST(answered[i].config == sent[i].config);
      BOOST_TEST(answered[i].partition == sent[i].partition);
      BOOST_TEST(answered[i].epoch == sent[i].epoch);
      BOOST_TEST(answered[i].state_checksum == checksum_of(sent[i].state));
    }
    caf::anon_send_exit(checkpoint, caf::exit_reason::user_shutdown);
  }
  auto log = store->unit_log();
  BOOST_REQUIRE(log.size() == static_cast<size_t>(kConfigs * kRounds));
  for (size_t i = 0; i < log.size(); ++i) {
    BOOST_TEST(log[i].seq == static_cast<int64_t>(i) + 1);
    BOOST_TEST(log[i].config == static_cast<ConfigId>(i % kConfigs));
    BOOST_TEST(log[i].examples == 100 + log[i].config);
  }
  for (ConfigId c = 0; c < kConfigs; ++c) {
    auto latest = store->latest_state(c);
    BOOST_REQUIRE(latest.ok());
    BOOST_TEST(*latest == result_of(c, (kRounds - 1) % 2, (kRounds - 1) / 2).state);
  }
}

// The scheduler frees a worker when its result arrives (result_s)
// and sends its next unit's state read right behind the commit. The entry
// keeps result_s and its end_s is not before the commit's request; a read of
// another config is answered, and a read of the committing config sees the
// commit.
BOOST_AUTO_TEST_CASE(entries_keep_the_result_time_and_reads_see_their_own_configs_commit) {
  TempDir dir;
  std::shared_ptr<StateStore> store = StateStore::open(dir.path.string(), true).value();
  for (ConfigId c = 0; c < 2; ++c) BOOST_REQUIRE(store->put_initial_state(c, "init").ok());
  {
    cerebro_system_config config(system_role::embedded);
    caf::actor_system system(config);
    auto checkpoint = spawn_checkpoint(system, store);
    caf::scoped_actor self(system);
    auto r = result_of(0, 0, 0);
    r.result_s = 4.0;
    auto commit = self->request(checkpoint, caf::infinite, commit_atom::value, r, uint64_t{7}, 1.0, 4.5);
    self->request(checkpoint, caf::infinite, latest_atom::value, ConfigId{1})
        .receive([&](const StateBytes& s) { BOOST_TEST(s == "init"); },
                 [&](const caf::error& e) { BOOST_FAIL("latest failed: " << caf::to_string(e)); });
    self->request(checkpoint, caf::infinite, latest_atom::value, ConfigId{0})
        .receive([&](const StateBytes& s) { BOOST_TEST(s == r.state); },
                 [&](const caf::error& e) { BOOST_FAIL("latest failed: " << caf::to_string(e)); });
    commit.receive(
        [&](const UnitLogEntry& e) {
          BOOST_TEST(e.start_s == 1.0);
          BOOST_TEST(e.result_s == 4.0);
          BOOST_TEST(e.end_s >= 4.5);
        },
        [&](const caf::error& e) { BOOST_FAIL("commit failed: " << caf::to_string(e)); });
    caf::anon_send_exit(checkpoint, caf::exit_reason::user_shutdown);
  }
  auto log = store->unit_log();
  BOOST_REQUIRE_EQUAL(log.size(), 1u);
  BOOST_TEST(log[0].result_s == 4.0);
  BOOST_TEST(log[0].worker_end_s() == 4.0);
}
