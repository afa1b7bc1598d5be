// Resuming an experiment: the control re-derives its book and decisions from
// the committed unit log; the store falls back from a damaged latest state.
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

#include <rocksdb/db.h>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/search/asha.hpp"
#include "runtime/store/state_store.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using cerebro::testing::TempDir;

namespace {

constexpr int kPartitions = 3;
constexpr int kConfigs = 6;
constexpr int kEpochs = 4;

// ASHA makes decisions that depend on the order epochs end, so a faithful
// restore is visible in them.
ExperimentControl make_control(uint64_t policy_seed) {
  AshaOptions asha;
  asha.max_epochs = kEpochs;
  asha.min_epochs = 1;
  asha.eta = 2;
  auto control =
      ExperimentControl(kPartitions, 7, ExperimentControl::Metric::val_accuracy, 3,
                        make_policy(SchedulerKind::randomized, policy_seed), std::make_unique<AshaProcedure>(asha));
  for (ConfigId c = 0; c < kConfigs; ++c) control.add_config(c, kEpochs);
  return control;
}

UnitLogEntry committed(const Dispatch& d, int64_t seq) {
  UnitLogEntry e;
  e.seq = seq;
  e.config = d.unit.config;
  e.partition = d.unit.partition;
  e.epoch = d.unit.epoch;
  e.worker = d.worker;
  e.status = UnitStatus::ok;
  e.examples = 10;
  e.train_loss = 1.0 / (1 + d.unit.epoch);
  e.has_validation = d.validate;
  e.val_accuracy = 0.1 * d.unit.config + 0.01 * d.unit.epoch;  // config 5 is best
  return e;
}

// Runs the control with two workers, committing one unit at a time, until
// `stop_after` units are committed or all is done. Appends to `log`.
void run(ExperimentControl& control, std::vector<UnitLogEntry>& log, int64_t stop_after,
         std::set<std::tuple<int, int, int>>* dispatched = nullptr) {
  std::vector<Dispatch> running;
  while (!control.all_done() && static_cast<int64_t>(log.size()) < stop_after) {
    for (auto& d : control.dispatch()) running.push_back(d);
    BOOST_REQUIRE(!running.empty());
    auto d = running.front();
    running.erase(running.begin());
    if (dispatched) dispatched->insert({d.unit.config, d.unit.partition, d.unit.epoch});
    log.push_back(committed(d, static_cast<int64_t>(log.size()) + 1));
    control.on_committed(d.worker, log.back());
    control.take_decisions();
  }
  // Units still running when the process "dies" are lost, not committed.
}

std::vector<std::string> texts(const std::vector<SearchDecision>& decisions) {
  std::vector<std::string> out;
  for (const auto& d : decisions) out.push_back(to_string(d));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_restored_control_reruns_no_committed_unit_and_rederives_decisions) {
  for (int64_t cut : {1, 7, 13, 20}) {
    auto first = make_control(3);
    first.add_worker(0, {0, 1, 2});
    first.add_worker(1, {0, 1, 2});
    std::vector<UnitLogEntry> log;
    std::vector<SearchDecision> before;
    {
      std::vector<Dispatch> running;
      while (static_cast<int64_t>(log.size()) < cut) {
        for (auto& d : first.dispatch()) running.push_back(d);
        auto d = running.front();
        running.erase(running.begin());
        log.push_back(committed(d, static_cast<int64_t>(log.size()) + 1));
        first.on_committed(d.worker, log.back());
        for (auto& x : first.take_decisions()) before.push_back(x);
      }
    }
    auto resumed = make_control(99);  // another policy seed: another schedule from here on
    auto restored = resumed.restore(log).value();
    BOOST_TEST(restored.units == cut);
    BOOST_TEST(texts(restored.decisions) == texts(before), "cut " << cut);
    BOOST_TEST(resumed.units_done() == cut);
    resumed.add_worker(10, {0, 1, 2});
    resumed.add_worker(11, {0, 1, 2});
    std::set<std::tuple<int, int, int>> rerun;
    run(resumed, log, 1 << 20, &rerun);
    for (size_t i = 0; i < static_cast<size_t>(cut); ++i)
      BOOST_TEST(!rerun.count({log[i].config, log[i].partition, log[i].epoch}), "unit rerun after cut " << cut);
    BOOST_TEST(resumed.all_done());
    BOOST_TEST(resumed.units_done() == static_cast<int64_t>(log.size()));
    // Each config trained whole epochs: every partition once per epoch.
    std::map<std::pair<int, int>, std::set<int>> visits;
    for (const auto& e : log) {
      bool first_visit = visits[std::make_pair(e.config, e.epoch)].insert(e.partition).second;
      BOOST_TEST(first_visit);
    }
    for (const auto& [key, partitions] : visits) BOOST_TEST(partitions.size() == static_cast<size_t>(kPartitions));
    for (ConfigId c = 0; c < kConfigs; ++c) BOOST_TEST(resumed.outcomes().at(c).status != ConfigStatus::running);
  }
}

BOOST_AUTO_TEST_CASE(a_log_that_contradicts_mop_is_refused) {
  auto control = make_control(3);
  control.add_worker(0, {0, 1, 2});
  std::vector<UnitLogEntry> log;
  run(control, log, 2);
  log.push_back(log.front());  // the same unit committed twice
  auto resumed = make_control(3);
  auto refused = resumed.restore(log);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST((refused.code() == StatusCode::invalid_argument));
  BOOST_TEST(refused.error().find("contradicts MOP") != std::string::npos, refused.error());
}

namespace {

UnitLogEntry unit(ConfigId c, PartitionId p) {
  UnitLogEntry e;
  e.config = c;
  e.partition = p;
  e.status = UnitStatus::ok;
  e.examples = 1;
  return e;
}

void damage(const std::string& dir, const std::string& key, bool remove) {
  rocksdb::DB* db = nullptr;
  BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir, &db).ok());
  std::string value;
  BOOST_REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
  if (remove) {
    BOOST_REQUIRE(db->Delete(rocksdb::WriteOptions(), key).ok());
  } else {
    value[value.size() - 1] ^= 0x55;  // a flipped byte in the state, its checksum line intact
    BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  }
  delete db;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_corrupt_latest_state_falls_back_to_the_previous_one) {
  TempDir tmp;
  auto dir = tmp.file("state");
  {
    auto store = StateStore::open(dir, true);
    BOOST_REQUIRE(store.ok());
    (*store)->put_initial_state(0, "init-0");
    (*store)->put_initial_state(1, "init-1");
    (*store)->commit_unit(unit(0, 0), "s1");  // seq 1
    (*store)->commit_unit(unit(1, 0), "t2");  // seq 2
    (*store)->commit_unit(unit(0, 1), "s3");  // seq 3
    (*store)->commit_unit(unit(0, 2), "s4");  // seq 4
  }
  damage(dir, "state/00000000/000000000004", false);
  auto store = StateStore::open(dir, false);
  BOOST_REQUIRE(store.ok());
  BOOST_TEST(!(*store)->latest_state(0).ok());
  auto untouched = (*store)->recover_latest_state(1);
  BOOST_REQUIRE(untouched.ok());
  BOOST_TEST(!untouched->fell_back);
  auto r = (*store)->recover_latest_state(0);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->fell_back);
  BOOST_TEST(r->intact_seq == 3);
  BOOST_REQUIRE_EQUAL(r->rolled_back.size(), 1u);
  BOOST_TEST(r->rolled_back[0].seq == 4);
  BOOST_TEST(r->problem.find("checksum") != std::string::npos);
  BOOST_TEST(*(*store)->latest_state(0) == "s3");
  BOOST_TEST((*store)->unit_log().size() == 3u);
  BOOST_TEST((*store)->rolled_back_units().size() == 1u);
  // The rerun unit gets a new sequence number; the rolled-back entry stays.
  auto rerun = (*store)->commit_unit(unit(0, 2), "s4-again");
  BOOST_REQUIRE(rerun.ok());
  BOOST_TEST(rerun->seq == 5);
  BOOST_TEST((*store)->unit_log().size() == 4u);
  BOOST_TEST(*(*store)->latest_state(0) == "s4-again");
}

BOOST_AUTO_TEST_CASE(a_missing_latest_state_and_a_damaged_previous_one_fall_back_to_the_initial_state) {
  TempDir tmp;
  auto dir = tmp.file("state");
  {
    auto store = StateStore::open(dir, true);
    BOOST_REQUIRE(store.ok());
    (*store)->put_initial_state(0, "init-0");
    (*store)->commit_unit(unit(0, 0), "s1");
    (*store)->commit_unit(unit(0, 1), "s2");
  }
  damage(dir, "state/00000000/000000000002", true);
  damage(dir, "state/00000000/000000000001", false);
  auto store = StateStore::open(dir, false);
  BOOST_REQUIRE(store.ok());
  auto r = (*store)->recover_latest_state(0);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->intact_seq == 0);
  BOOST_TEST(r->rolled_back.size() == 2u);
  BOOST_TEST(*(*store)->latest_state(0) == "init-0");
  BOOST_TEST((*store)->unit_log().empty());
  // A second recovery finds nothing left to do.
  auto again = (*store)->recover_latest_state(0);
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(!again->fell_back);
}

BOOST_AUTO_TEST_CASE(no_intact_state_at_all_is_an_error_not_a_crash) {
  TempDir tmp;
  auto dir = tmp.file("state");
  {
    auto store = StateStore::open(dir, true);
    BOOST_REQUIRE(store.ok());
    (*store)->put_initial_state(0, "init-0");
  }
  damage(dir, "init/00000000", false);
  auto store = StateStore::open(dir, false);
  BOOST_REQUIRE(store.ok());
  auto r = (*store)->recover_latest_state(0);
  BOOST_TEST(!r.ok());
  BOOST_TEST(r.error().find("no intact state") != std::string::npos);
}

// A data-parallel gang's k units share one state: when it is damaged, all k
// roll back together and the config falls back to its state before the gang.
BOOST_AUTO_TEST_CASE(a_corrupt_gang_state_rolls_back_all_of_the_gangs_units) {
  TempDir tmp;
  auto dir = tmp.file("state");
  {
    auto store = StateStore::open(dir, true);
    BOOST_REQUIRE(store.ok());
    (*store)->put_initial_state(0, "init-0");
    (*store)->commit_unit(unit(0, 0), "s1");                              // seq 1
    auto gang = (*store)->commit_gang({unit(0, 1), unit(0, 2)}, "gang");  // seqs 2 and 3, the state at 3
    BOOST_REQUIRE_MESSAGE(gang.ok(), gang.error());
  }
  damage(dir, "state/00000000/000000000003", false);
  auto store = StateStore::open(dir, false);
  BOOST_REQUIRE(store.ok());
  auto r = (*store)->recover_latest_state(0);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error());
  BOOST_TEST(r->fell_back);
  BOOST_TEST(r->intact_seq == 1);
  BOOST_REQUIRE_EQUAL(r->rolled_back.size(), 2u);
  BOOST_TEST(r->rolled_back[0].seq == 2);
  BOOST_TEST(r->rolled_back[1].seq == 3);
  BOOST_TEST(*(*store)->latest_state(0) == "s1");
  BOOST_TEST((*store)->unit_log().size() == 1u);
}

// The store keeps its log and config records in memory: what it answers
// follows every commit, roll-back and config write, and a share taken
// before a commit keeps what it held; a fresh open answers the same.
BOOST_AUTO_TEST_CASE(the_records_kept_in_memory_follow_commits_roll_backs_and_config_writes) {
  TempDir tmp;
  auto dir = tmp.file("state");
  auto seqs = [](const std::vector<UnitLogEntry>& log) {
    std::vector<int64_t> out;
    for (const auto& e : log) out.push_back(e.seq);
    return out;
  };
  {
    auto store = StateStore::open(dir, true);
    BOOST_REQUIRE(store.ok());
    auto& s = **store;
    s.put_initial_state(0, "init-0");
    s.put_initial_state(1, "init-1");
    s.put_config(ConfigRecord{0, {{"lr", 0.1}}, ConfigStatus::running, ""});
    s.commit_unit(unit(0, 0), "s1");  // seq 1
    auto before = s.unit_log_shared();
    s.commit_unit(unit(1, 0), "t2");  // seq 2
    s.commit_unit(unit(0, 1), "s3");  // seq 3
    BOOST_TEST(seqs(*before) == std::vector<int64_t>({1}));
    BOOST_TEST(seqs(*s.unit_log_shared()) == std::vector<int64_t>({1, 2, 3}));
    BOOST_TEST(seqs(s.unit_log_after(1)) == std::vector<int64_t>({2, 3}));
    BOOST_TEST(s.unit_log_after(3).empty());
    s.put_config(ConfigRecord{0, {{"lr", 0.2}}, ConfigStatus::completed, ""});
    s.put_config(ConfigRecord{1, {{"lr", 0.3}}, ConfigStatus::running, ""});
    BOOST_REQUIRE_EQUAL(s.configs().size(), 2u);
    BOOST_TEST(s.configs()[0].params["lr"].get<double>() == 0.2);
    BOOST_TEST(s.configs()[0].status == ConfigStatus::completed);
  }
  damage(dir, "state/00000000/000000000003", true);
  {
    auto store = StateStore::open(dir, false);
    BOOST_REQUIRE(store.ok());
    auto& s = **store;
    BOOST_TEST(seqs(s.unit_log()) == std::vector<int64_t>({1, 2, 3}));
    auto recovered = s.recover_latest_state(0);
    BOOST_REQUIRE(recovered.ok());
    BOOST_TEST(recovered->fell_back);
    BOOST_TEST(seqs(s.unit_log()) == std::vector<int64_t>({1, 2}));
    BOOST_TEST(seqs(s.rolled_back_units()) == std::vector<int64_t>({3}));
    BOOST_TEST(seqs(s.unit_log_after(0)) == std::vector<int64_t>({1, 2}));
    BOOST_TEST(s.commit_unit(unit(0, 1), "s4").ok());  // seq 4
    BOOST_TEST(seqs(s.unit_log()) == std::vector<int64_t>({1, 2, 4}));
  }
  auto reopened = StateStore::open_read_only(dir);
  BOOST_REQUIRE(reopened.ok());
  BOOST_TEST(seqs((*reopened)->unit_log()) == std::vector<int64_t>({1, 2, 4}));
  BOOST_TEST(seqs((*reopened)->rolled_back_units()) == std::vector<int64_t>({3}));
  BOOST_REQUIRE_EQUAL((*reopened)->configs().size(), 2u);
  BOOST_TEST((*reopened)->configs()[1].params["lr"].get<double>() == 0.3);
}
