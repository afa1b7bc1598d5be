// check_mop_invariants: accepts a correct unit log and names each kind of
// violation in hand-made bad ones.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runtime/scheduling/unit_log_check.hpp"

using namespace cerebro;

namespace {

// Two partitions, workers 0 and 1. Config 0 completes 2 epochs, config 1
// completes 1 and is stopped during epoch 1 after one unit. Units touch
// (end == next start) but never overlap. One failed attempt overlaps others.
std::vector<UnitRecord> good_log() {
  return {
      {0, 1, 0, 0, 0.0, 1.0, true},  //  worker 0: [0,1] [1,2.5] [2.5,3] [3,4]
      {1, 0, 0, 1, 0.0, 1.0, true},  //  worker 1: [0,1] [1,2]   [2,3]
      {0, 0, 0, 1, 1.0, 2.0, true}, {1, 1, 0, 0, 1.0, 2.5, true},
      {0, 0, 1, 1, 2.0, 3.0, true}, {1, 1, 1, 0, 2.5, 3.0, true},   //  config 1's partial epoch 1
      {0, 1, 1, 0, 3.0, 4.0, true}, {0, 1, 1, 1, 2.9, 3.5, false},  //  a failed attempt: ignored
  };
}

ExpectedRun good_expected() { return ExpectedRun{2, {{0, 2}, {1, 1}}}; }

// The check fails and its message contains every needle.
void expect_violation(const std::vector<UnitRecord>& log, const ExpectedRun& expected,
                      const std::vector<std::string>& needles) {
  Status s = check_mop_invariants(log, expected);
  BOOST_TEST_REQUIRE(!s.ok());
  for (const std::string& needle : needles) {
    BOOST_TEST(s.message().find(needle) != std::string::npos, "'" << needle << "' not in: " << s.message());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(unit_log_check)

BOOST_AUTO_TEST_CASE(accepts_a_correct_log) {
  Status s = check_mop_invariants(good_log(), good_expected());
  BOOST_TEST(s.ok(), s.message());
  BOOST_TEST(check_mop_invariants({}, ExpectedRun{3, {{4, 0}}}).ok());
}

BOOST_AUTO_TEST_CASE(rejects_a_missing_partition) {
  std::vector<UnitRecord> log = good_log();
  log.erase(log.begin() + 6);  // config 0, partition 1, epoch 1
  expect_violation(log, good_expected(), {"completeness", "config 0 epoch 1", "never visited partition 1"});
  expect_violation({}, ExpectedRun{2, {{3, 1}}}, {"config 3 epoch 0", "partition 0"});
}

BOOST_AUTO_TEST_CASE(rejects_a_unit_twice) {
  std::vector<UnitRecord> log = good_log();
  log.push_back({0, 1, 0, 1, 10.0, 11.0, true});
  expect_violation(log, good_expected(),
                   {"committed twice", "config 0 / partition 1 / epoch 0 on worker 1 [10 s, 11 s]"});
}

BOOST_AUTO_TEST_CASE(rejects_overlapping_units_of_one_config) {
  std::vector<UnitRecord> log = good_log();
  log[3].worker = 2;
  log[3].start_s = 0.5;
  log[3].end_s = 1.5;
  expect_violation(
      log, good_expected(),
      {"isolation", "config 1 / partition 0 / epoch 0", "config 1 / partition 1 / epoch 0 on worker 2 [0.5 s, 1.5 s]"});
}

BOOST_AUTO_TEST_CASE(rejects_overlapping_units_on_one_worker) {
  std::vector<UnitRecord> log = good_log();
  log[4].worker = 0;  // config 0 epoch 1 partition 0 at [2,3] now collides on worker 0
  expect_violation(log, good_expected(),
                   {"one unit per worker", "config 0 / partition 0 / epoch 1 on worker 0",
                    "config 1 / partition 1 / epoch 0 on worker 0 [1 s, 2.5 s]"});
}

BOOST_AUTO_TEST_CASE(rejects_epochs_out_of_order) {
  std::vector<UnitRecord> log = good_log();
  std::swap(log[2].start_s, log[4].start_s);  // epoch 1 of partition 0 runs at [1,2]
  std::swap(log[2].end_s, log[4].end_s);
  expect_violation(log, good_expected(),
                   {"epoch order", "config 0 / partition 0 / epoch 0", "config 0 / partition 0 / epoch 1"});
}

BOOST_AUTO_TEST_CASE(rejects_epochs_beyond_the_expected_ones) {
  std::vector<UnitRecord> log = good_log();
  log.push_back({1, 0, 2, 3, 10.0, 11.0, true});
  expect_violation(log, good_expected(),
                   {"completeness", "config 1 / partition 0 / epoch 2", "completed only 1 epoch"});
  ExpectedRun fewer = good_expected();
  fewer.epochs_completed[0] = 1;
  expect_violation(good_log(), fewer, {"config 0 visited every partition in epoch 1", "completed only 1"});
}

BOOST_AUTO_TEST_CASE(rejects_malformed_records) {
  std::vector<UnitRecord> log = good_log();
  log.push_back({9, 0, 0, 0, 20.0, 21.0, true});
  expect_violation(log, good_expected(), {"unknown config", "config 9"});
  log = good_log();
  log[0].partition = 2;
  expect_violation(log, good_expected(), {"bad partition", "outside 0..1"});
  log = good_log();
  log[0].end_s = -1.0;
  expect_violation(log, good_expected(), {"ends before it starts"});
  log = good_log();
  log[0].epoch = -1;
  expect_violation(log, good_expected(), {"bad epoch"});
  expect_violation(good_log(), ExpectedRun{0, {{0, 2}, {1, 1}}}, {"0 partitions"});
}

BOOST_AUTO_TEST_SUITE_END()
