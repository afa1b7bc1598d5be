// The fault matrix, embedded cases: a run killed at any point resumes with
// `cerebro run --resume` without losing or rerunning a committed unit; a
// damaged latest checkpoint reruns exactly the units after the last intact
// state, an unreadable one rolls nothing back; failing units are retried,
// then fail only their config.
#define BOOST_TEST_MODULE faults
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <rocksdb/db.h>

#include "test/support/faults_util.hpp"
#include "tools/child_process.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;

namespace {

constexpr int kConfigs = 4;
constexpr int kEpochs = 3;
constexpr int kPartitions = 2;

std::string spec(const TempDir& tmp) {
  return tmp.write("small.toml", small_spec("model = [\"mlp\"]\nlr = [1e-3, 2e-3, 3e-3, 5e-3]\nhidden = [[32]]\n",
                                            kEpochs, 3000, kPartitions));
}

// The units committed before the interruption, in commit order.
std::vector<UnitLogEntry> log_of(const std::string& run) { return open_store(run)->unit_log(); }

void check_resumed(const std::string& run, const std::vector<UnitLogEntry>& before) {
  auto store = open_store(run);
  auto log = store->unit_log();
  check_complete_run(log, kConfigs, kPartitions, kEpochs);
  // The units committed before the interruption are still there, unchanged,
  // and none of them ran again (check_complete_run: no unit twice).
  BOOST_REQUIRE(log.size() >= before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    BOOST_TEST(log[i].seq == before[i].seq);
    BOOST_TEST(log[i].state_checksum == before[i].state_checksum);
  }
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["resumes"] == 1);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.6);
}

// Reports a case's figures for docs/RELIABILITY.md (--log_level=message):
// wall seconds from the first start to the finished run, all processes.
struct Figures {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void report(const std::string& run) const {
    auto wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST_MESSAGE("fault-matrix: " << boost::unit_test::framework::current_test_case().p_name << " wall_s=" << wall
                                        << " units_rolled_back=" << open_store(run)->rolled_back_units().size());
  }
};

}  // namespace

// The reference for the fault cases' extra wall time.
BOOST_AUTO_TEST_CASE(fault_free_baseline) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + spec(tmp) + " --out " + run);
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  check_complete_run(open_store(run)->unit_log(), kConfigs, kPartitions, kEpochs);
  figures.report(run);
}

// Killed between "state written" and "unit acknowledged": the unit is
// durable, so the resumed run counts it and does not run it again.
BOOST_AUTO_TEST_CASE(a_crash_after_a_commit_before_its_acknowledgement_loses_nothing) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto first =
      run_command(with_faults("crash=after_commit:7") + cerebro_binary() + " run " + spec(tmp) + " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  BOOST_REQUIRE(first.text.find("crashing at after_commit") != std::string::npos);
  auto before = log_of(run);
  BOOST_REQUIRE_EQUAL(commits_in(before), 7u);  // the 7th commit is durable though never acknowledged
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  BOOST_TEST(resumed.text.find("resuming") != std::string::npos);
  check_resumed(run, before);
  figures.report(run);
}

// An exception from a run's code (a bug) reaches main as an error: the
// process ends instead of hanging in the actor system's destructor, which
// waits for actors nobody told to exit.
BOOST_AUTO_TEST_CASE(an_exception_in_a_run_ends_the_process_with_its_message) {
  TempDir tmp;
  ChildProcess child({cerebro_binary(), "run", spec(tmp), "--out", tmp.file("run")}, tmp.file("run.log"),
                     {"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=throw=run_prepared"});
  const int code = child.wait_exit(60);
  BOOST_TEST_INFO(child.log());
  BOOST_TEST(code != 0);
  BOOST_TEST(code != -1);  // -1: still running after 60 s, i.e. hung
  BOOST_TEST(child.log().find("thrown at run_prepared") != std::string::npos);
}

// SIGKILL at an arbitrary moment of training, then resume.
BOOST_AUTO_TEST_CASE(an_embedded_run_killed_mid_way_resumes) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  {
    // Both workers slowed 10x (test-only fault injection): unslowed, the 24
    // units take about 0.2 s here, so the kill, 100 ms polls after the first
    // epoch, sometimes came when 17 of them were committed, close to none
    // left to interrupt.
    ChildProcess child(
        {cerebro_binary(), "run", spec(tmp), "--out", run}, tmp.file("first.log"),
        {"CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test", "CEREBRO_FAULTS=slow_worker=0:10;slow_worker=1:10"});
    // Wait for some units to be committed, then kill it mid-run.
    BOOST_REQUIRE_MESSAGE(child.wait_for_log(" units ", 120), child.log());
    BOOST_REQUIRE_MESSAGE(child.wait_for_log("epoch 0:", 120), child.log());
    child.kill_now();
  }
  auto before = log_of(run);
  BOOST_TEST_MESSAGE("killed after " << before.size() << " committed units");
  BOOST_REQUIRE(before.size() < static_cast<size_t>(kConfigs * kPartitions * kEpochs));
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  check_resumed(run, before);
  figures.report(run);
  // A finished run is not resumed again.
  auto again = run_cerebro("run --resume " + run);
  BOOST_TEST(again.exit_code != 0);
  BOOST_TEST(again.text.find("has finished") != std::string::npos);
}

// The latest state of one config is damaged on disk while the run is down:
// the resumed run warns, falls back to the previous state and reruns exactly
// the units after it.
BOOST_AUTO_TEST_CASE(a_corrupt_latest_checkpoint_reruns_exactly_the_units_after_the_last_intact_state) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto first =
      run_command(with_faults("crash=after_commit:10") + cerebro_binary() + " run " + spec(tmp) + " --out " + run);
  BOOST_REQUIRE_MESSAGE(first.exit_code != 0, first.text);
  auto before = log_of(run);
  BOOST_REQUIRE_EQUAL(commits_in(before), 10u);
  // Damage the newest state of the config of the last committed unit.
  const auto victim = before.back();
  {
    rocksdb::DB* db = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), run + "/state", &db).ok());
    auto key = fmt::format("state/{:08d}/{:012d}", victim.config, victim.seq);
    std::string value;
    BOOST_REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
    value[value.size() / 2] ^= 0x5a;
    BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
    delete db;
  }
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  BOOST_TEST(resumed.text.find(fmt::format("warning: config {}", victim.config)) != std::string::npos);
  // The units that state ended: one, or a whole gang's when a gang wrote it.
  auto wrote_victim = [&](const UnitLogEntry& e) {
    return victim.gang_size > 0 ? e.gang == victim.gang : e.seq == victim.seq;
  };
  const auto victims = static_cast<size_t>(std::count_if(before.begin(), before.end(), wrote_victim));
  BOOST_TEST(resumed.text.find(fmt::format("{} unit(s) run again", victims)) != std::string::npos);

  auto store = open_store(run);
  auto log = store->unit_log();
  check_complete_run(log, kConfigs, kPartitions, kEpochs);
  auto rolled_back = store->rolled_back_units();
  BOOST_REQUIRE_EQUAL(rolled_back.size(), victims);
  for (const auto& e : rolled_back) BOOST_TEST(wrote_victim(e));
  // Every other unit committed before the crash is kept; the victim's units
  // ran again, later.
  std::map<UnitKey, int64_t> seq_of;
  for (const auto& e : log) seq_of[key_of(e)] = e.seq;
  for (const auto& e : before) {
    if (wrote_victim(e)) {
      BOOST_TEST(seq_of.at(key_of(e)) > victim.seq);
    } else {
      BOOST_TEST(seq_of.at(key_of(e)) == e.seq);
    }
  }
  BOOST_TEST(read_json(run + "/summary.json")["units_rolled_back"] == victims);
  store.reset();  // one opener at a time
  figures.report(run);
}

// A unit that fails once is retried and the run completes; a unit that
// always fails marks its config failed with the error, and the others finish.
BOOST_AUTO_TEST_CASE(failing_units_are_retried_then_fail_only_their_config) {
  TempDir tmp;
  auto run_once = tmp.file("once");
  auto once =
      run_command(with_faults("fail_unit=1:0:1:1") + cerebro_binary() + " run " + spec(tmp) + " --out " + run_once);
  BOOST_TEST_INFO(once.text);
  BOOST_REQUIRE_EQUAL(once.exit_code, 0);
  BOOST_TEST(once.text.find("attempt 1 of 3") != std::string::npos);
  check_complete_run(open_store(run_once)->unit_log(), kConfigs, kPartitions, kEpochs);

  auto run_always = tmp.file("always");
  auto always =
      run_command(with_faults("fail_unit=2:1:0:-1") + cerebro_binary() + " run " + spec(tmp) + " --out " + run_always);
  BOOST_TEST_INFO(always.text);
  BOOST_REQUIRE_EQUAL(always.exit_code, 0);
  auto summary = read_json(run_always + "/summary.json");
  bool found = false;
  for (const auto& c : summary["configs"]) {
    if (c["id"] == 2) {
      found = true;
      BOOST_TEST(c["status"] == "failed");
      BOOST_TEST(c.value("error", "").find("injected") != std::string::npos);
    } else {
      BOOST_TEST(c["status"] == "completed");
    }
  }
  BOOST_TEST(found);
  auto log = open_store(run_always)->unit_log();
  ExpectedRun expected{kPartitions, {{0, kEpochs}, {1, kEpochs}, {2, 0}, {3, kEpochs}}};
  auto invariants = check_mop_invariants(records_of(log), expected);
  BOOST_TEST(invariants.ok(), invariants.message());
}

// A worker actor that dies mid-unit is replaced by its node's agent (the
// supervisor); the unit counts as a failed attempt and runs again elsewhere.
BOOST_AUTO_TEST_CASE(a_dead_worker_is_respawned_and_its_unit_requeued) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto out = run_command(with_faults("worker_exit=1:0:0") + cerebro_binary() + " run " + spec(tmp) + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("injected worker exit") != std::string::npos);
  BOOST_TEST(out.text.find("respawned worker") != std::string::npos);
  check_complete_run(open_store(run)->unit_log(), kConfigs, kPartitions, kEpochs);
  BOOST_TEST(read_json(run + "/summary.json")["workers"] == kPartitions);
  figures.report(run);
}

// A checkpoint found damaged while the run is live (when its config's next
// unit loads it): the run resumes in place from the newest intact states and
// reruns exactly the damaged unit.
BOOST_AUTO_TEST_CASE(a_checkpoint_damaged_during_the_run_is_recovered_in_place) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto out = run_command(with_faults("damage_state=6") + cerebro_binary() + " run " + spec(tmp) + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("damaged checkpoint") != std::string::npos);
  BOOST_TEST(out.text.find("resuming from the newest intact checkpoints") != std::string::npos);
  {
    auto store = open_store(run);
    check_complete_run(store->unit_log(), kConfigs, kPartitions, kEpochs);
    auto rolled_back = store->rolled_back_units();
    BOOST_REQUIRE_EQUAL(rolled_back.size(), 1u);
    BOOST_TEST(rolled_back[0].seq == 6);
  }
  figures.report(run);
}

// An unreadable checkpoint is not a damaged one: the state's read fails with
// an I/O error while the stored state is intact. The unit fails that attempt
// and runs again; the run neither stops to recover nor rolls back a
// committed unit (only a failed checksum does that, above).
BOOST_AUTO_TEST_CASE(an_unreadable_checkpoint_does_not_roll_back_committed_units) {
  TempDir tmp;
  Figures figures;
  auto run = tmp.file("run");
  auto out = run_command(with_faults("unreadable_state=6") + cerebro_binary() + " run " + spec(tmp) + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("reading its state failed (injected)") != std::string::npos);
  BOOST_TEST(out.text.find("attempt 1 of 3") != std::string::npos);
  BOOST_TEST(out.text.find("damaged checkpoint") == std::string::npos);
  BOOST_TEST(out.text.find("resuming from the newest intact checkpoints") == std::string::npos);
  {
    auto store = open_store(run);
    check_complete_run(store->unit_log(), kConfigs, kPartitions, kEpochs);
    BOOST_TEST(store->rolled_back_units().empty());
  }
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(!summary.contains("resumes"));
  figures.report(run);
}
