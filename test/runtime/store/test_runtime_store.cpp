#define BOOST_TEST_MODULE runtime
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <random>

#include <caf/all.hpp>
#include <rocksdb/db.h>

#include "runtime/base/fault_injection.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/run/new_config.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "runtime/store/state_store.hpp"

using namespace cerebro;
namespace fs = std::filesystem;

namespace {

struct TempStoreDir {
  fs::path path = fs::temp_directory_path() / ("cerebro-store-" + std::to_string(std::random_device{}()));
  ~TempStoreDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

UnitLogEntry entry(ConfigId c, PartitionId p, int32_t epoch) {
  UnitLogEntry e;
  e.config = c;
  e.partition = p;
  e.epoch = epoch;
  e.status = UnitStatus::ok;
  e.train_loss = 0.5;
  e.examples = 10;
  return e;
}

class system_config : public caf::actor_system_config {
 public:
  system_config() { register_message_types(*this); }
};

template <class T>
T round_trip(caf::actor_system& sys, T value) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  BOOST_REQUIRE(!sink(value));
  T copy;
  caf::binary_deserializer source{sys, buf};
  BOOST_REQUIRE(!source(copy));
  return copy;
}

}  // namespace

BOOST_AUTO_TEST_CASE(commit_assigns_sequence_and_latest_state_follows) {
  TempStoreDir dir;
  auto store = StateStore::open(dir.path.string(), true).value();
  BOOST_REQUIRE(store->put_initial_state(3, "init").ok());
  BOOST_TEST(*store->latest_state(3) == "init");
  auto a = store->commit_unit(entry(3, 0, 0), "after-p0");
  auto b = store->commit_unit(entry(3, 1, 0), "after-p1");
  BOOST_REQUIRE(a.ok() && b.ok());
  BOOST_TEST(a->seq == 1);
  BOOST_TEST(b->seq == 2);
  BOOST_TEST(b->state_checksum == checksum_of("after-p1"));
  BOOST_TEST(*store->latest_state(3) == "after-p1");
  BOOST_TEST(*store->initial_state(3) == "init");
  BOOST_TEST(!store->latest_state(4).ok());
}

BOOST_AUTO_TEST_CASE(log_survives_reopen_and_sequence_continues) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    store->put_initial_state(0, "s");
    store->commit_unit(entry(0, 0, 0), "x");
    store->commit_unit(entry(0, 1, 0), "y");
    store->put_config(ConfigRecord{0, {{"model", "mlp"}}, ConfigStatus::completed, ""});
    store->put_meta("k", "v");
  }
  auto store = StateStore::open(dir.path.string(), false).value();
  auto log = store->unit_log();
  BOOST_REQUIRE_EQUAL(log.size(), 2u);
  BOOST_TEST(log[1].partition == 1);
  BOOST_TEST(store->commit_unit(entry(0, 0, 1), "z")->seq == 3);
  BOOST_TEST(store->configs().at(0).status == ConfigStatus::completed);
  BOOST_TEST(store->configs().at(0).params["model"] == "mlp");
  BOOST_TEST(*store->get_meta("k") == "v");
  BOOST_TEST(!store->get_meta("absent").has_value());
}

// The meta "pipeline_stages" gains the configs created while the
// run trains, merged with the run's own, and survives a reopen (what a
// resumed run reads back); a damaged record is an error, not "no stages".
BOOST_AUTO_TEST_CASE(pipeline_stages_are_merged_into_the_meta_and_read_back) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    BOOST_TEST(stored_pipeline_stages(*store).value().empty());
    store->put_meta("pipeline_stages", R"({"1": 2})");  // the run's own, written at its start
    BOOST_TEST(record_pipeline_stages(*store, 7, 3).ok());
    BOOST_TEST(record_pipeline_stages(*store, 9, 2).ok());
    BOOST_TEST(!record_pipeline_stages(*store, 10, 1).ok(), "a pipeline has at least 2 stages");
  }
  auto store = StateStore::open(dir.path.string(), false).value();
  auto stages = stored_pipeline_stages(*store).value();
  BOOST_TEST((stages == std::map<ConfigId, int32_t>{{1, 2}, {7, 3}, {9, 2}}));
  BOOST_TEST(stage_count_of(pack_stage_states({"s0", "s1", "s2"})).value() == 3);
  BOOST_TEST(stage_count_of("a whole model's state").value() == 1);
  for (const char* bad : {"[1, 2]", R"({"x": 2})", R"({"3": "two"})", R"({"3": 1})", "not json"}) {
    store->put_meta("pipeline_stages", bad);
    auto read = stored_pipeline_stages(*store);
    BOOST_TEST(!read.ok(), bad);
    BOOST_TEST((read.code() == StatusCode::corruption), bad);
  }
}

BOOST_AUTO_TEST_CASE(opening_a_missing_store_without_create_fails_clearly) {
  auto r = StateStore::open("/nonexistent/cerebro-state", false);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().find("/nonexistent/cerebro-state") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(corrupted_state_is_detected_by_its_checksum) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    store->put_initial_state(0, "s");
    store->commit_unit(entry(0, 0, 0), "good-state");
  }
  {
    rocksdb::DB* db = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.path.string(), &db).ok());
    std::string value;
    std::string key = "state/00000000/000000000001";
    BOOST_REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
    value.back() ^= 1;
    db->Put(rocksdb::WriteOptions(), key, value);
    delete db;
  }
  auto store = StateStore::open(dir.path.string(), false).value();
  auto state = store->latest_state(0);
  BOOST_REQUIRE(!state.ok());
  BOOST_TEST(state.error().find("checksum") != std::string::npos);
}

// The codes the rollback path keys on: only a checksum failure is
// corruption; a config with no state is not_found; the store's read and
// recovery tell them apart without reading the message.
BOOST_AUTO_TEST_CASE(state_failures_carry_their_code) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    store->put_initial_state(0, "s");
    store->commit_unit(entry(0, 0, 0), "good-state");
    store->commit_unit(entry(0, 1, 0), "newer-state");
  }
  {
    rocksdb::DB* db = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.path.string(), &db).ok());
    std::string value;
    std::string key = "state/00000000/000000000002";
    BOOST_REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
    value.back() ^= 1;
    db->Put(rocksdb::WriteOptions(), key, value);
    db->Put(rocksdb::WriteOptions(), "init/00000001", "no checksum line");
    delete db;
  }
  auto store = StateStore::open(dir.path.string(), false).value();
  auto damaged = store->latest_state(0);
  BOOST_REQUIRE(!damaged.ok());
  BOOST_TEST(damaged.status().is_corruption());
  BOOST_TEST(store->latest_state(1).status().is_corruption());
  auto missing = store->latest_state(7);
  BOOST_TEST(missing.status().is_not_found(), missing.error());
  BOOST_TEST((store->initial_state(7).code() == StatusCode::not_found));
  BOOST_TEST(store->copy_epoch_state(0, 4, 2, nlohmann::json::object()).is_not_found());
  auto opened = StateStore::open("/nonexistent/cerebro-state", false);
  BOOST_TEST(!opened.ok());
  BOOST_TEST(!opened.status().is_corruption());
  // Recovery gives up exactly the damaged state and keeps the code of a
  // config that has no intact state at all.
  auto recovered = store->recover_latest_state(0);
  BOOST_REQUIRE(recovered.ok());
  BOOST_TEST(recovered->fell_back);
  BOOST_TEST(recovered->intact_seq == 1);
  BOOST_TEST(*store->latest_state(0) == "good-state");
  BOOST_TEST(store->recover_latest_state(1).status().is_corruption());
  BOOST_TEST(store->recover_latest_state(7).status().is_not_found());
}

BOOST_AUTO_TEST_CASE(only_the_two_newest_states_and_the_initial_one_are_kept) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    store->put_initial_state(0, "init");
    for (int i = 0; i < 5; ++i) store->commit_unit(entry(0, i % 2, i / 2), "state" + std::to_string(i));
  }
  rocksdb::DB* db = nullptr;
  BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.path.string(), &db).ok());
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  int states = 0;
  for (it->Seek("state/"); it->Valid() && it->key().starts_with("state/"); it->Next()) ++states;
  it.reset();
  delete db;
  BOOST_TEST(states == 2);
}

BOOST_AUTO_TEST_CASE(epoch_metrics_weight_losses_by_examples) {
  std::vector<UnitLogEntry> log{entry(1, 0, 0), entry(1, 1, 0), entry(2, 0, 0)};
  log[0].train_loss = 1.0;
  log[0].examples = 30;
  log[1].train_loss = 2.0;
  log[1].examples = 10;
  log[1].has_validation = true;
  log[1].val_accuracy = 0.75;
  auto m = epoch_metrics(log, 1);
  BOOST_REQUIRE_EQUAL(m.size(), 1u);
  BOOST_TEST(m[0].train_loss == 1.25);
  BOOST_TEST(m[0].val_accuracy == 0.75);
}

BOOST_AUTO_TEST_CASE(log_entries_round_trip_through_json) {
  auto e = entry(7, 2, 3);
  e.seq = 42;
  e.val_accuracy = 0.875;
  e.seed = 0xfedcba9876543210ULL;
  auto back = unit_log_entry_from_json(to_json(e)).value();
  BOOST_TEST(back.seq == 42);
  BOOST_TEST(back.seed == e.seed);
  BOOST_TEST(back.val_accuracy == 0.875);
  BOOST_TEST(back.config == 7);
}

// A log entry or config record this build cannot read (another build's, or
// damaged) is invalid_argument: the store does not open, and names the record.
BOOST_AUTO_TEST_CASE(a_store_with_a_record_it_cannot_read_does_not_open) {
  auto json = to_json(entry(1, 0, 0));
  json["status"] = "exploded";
  BOOST_TEST(unit_log_entry_from_json(json).status().is_invalid_argument());
  json["status"] = "ok";
  json.erase("train_loss");
  BOOST_TEST(unit_log_entry_from_json(json).status().is_invalid_argument());
  BOOST_TEST(unit_log_entry_from_json(json).error().find("train_loss") != std::string::npos);

  for (const auto& [key, damage] : std::vector<std::pair<std::string, std::string>>{
           {"log/000000000001", R"("status":"ok")"}, {"config/00000001", R"("status":"running")"}}) {
    TempStoreDir dir;
    {
      auto store = StateStore::open(dir.path.string(), true).value();
      BOOST_REQUIRE(store->put_config(ConfigRecord{1, {{"lr", 0.1}}, ConfigStatus::running, ""}).ok());
      BOOST_REQUIRE(store->commit_unit(entry(1, 0, 0), "s").ok());
    }
    {
      rocksdb::DB* db = nullptr;
      BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.path.string(), &db).ok());
      std::string value;
      BOOST_REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
      auto at = value.find(damage);
      BOOST_REQUIRE(at != std::string::npos);
      value.replace(at, damage.size(), R"("status":"exploded")");
      BOOST_REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
      delete db;
    }
    for (bool read_only : {false, true}) {
      auto opened =
          read_only ? StateStore::open_read_only(dir.path.string()) : StateStore::open(dir.path.string(), false);
      BOOST_TEST(opened.status().is_invalid_argument(), opened.error());
      BOOST_TEST(opened.error().find(key) != std::string::npos, opened.error());
      BOOST_TEST(opened.error().find("exploded") != std::string::npos, opened.error());
    }
  }
}

BOOST_AUTO_TEST_CASE(messages_round_trip_through_caf_serialization) {
  system_config cfg;
  caf::actor_system sys{cfg};
  unit_task task;
  task.config = 5;
  task.partition = 1;
  task.epoch = 2;
  task.attempt = 1;
  task.seed = 0x123456789abcdefULL;
  task.validate = true;
  task.params_json = R"({"model":"mlp"})";
  task.state = std::string(1 << 20, '\0') + "tail";  // binary bytes, embedded NULs
  auto t = round_trip(sys, task);
  BOOST_TEST(t.config == 5);
  BOOST_TEST(t.seed == task.seed);
  BOOST_TEST(t.validate);
  BOOST_TEST(t.params_json == task.params_json);
  BOOST_TEST((t.state == task.state));

  unit_result result;
  result.config = 5;
  result.status = UnitStatus::diverged;
  result.state = "abc";
  result.val_accuracy = 0.5;
  result.train_s = 1.25;
  auto r = round_trip(sys, result);
  BOOST_TEST(r.status == UnitStatus::diverged);
  BOOST_TEST(r.val_accuracy == 0.5);
  BOOST_TEST(r.train_s == 1.25);

  progress_update p;
  p.units_done = 3;
  p.event = "x";
  BOOST_TEST(round_trip(sys, p).units_done == 3);
  experiment_done d{12.5, 3.5, "why"};
  BOOST_TEST(round_trip(sys, d).error == "why");
}

BOOST_AUTO_TEST_CASE(checkpoint_payloads_round_trip_through_caf_serialization) {
  system_config cfg;
  caf::actor_system sys{cfg};
  auto e = entry(7, 2, 3);
  e.seq = 42;
  e.seed = 0xfedcba9876543210ULL;
  e.has_validation = true;
  e.val_accuracy = 0.875;
  e.end_s = 9.5;
  e.state_checksum = "crc32:0badf00d";
  e.state_bytes = 1234;
  e.rolled_back = true;
  auto back = round_trip(sys, e);
  BOOST_TEST(to_json(back) == to_json(e));  // every field

  auto exploit = SearchDecision::exploit(3, 1, 0, 1, nlohmann::json{{"lr", 0.01}, {"model", "mlp"}}, "pbt exploit");
  BOOST_TEST((round_trip(sys, exploit) == exploit));
  auto plain = SearchDecision::continue_training(4, 0);
  BOOST_TEST((round_trip(sys, plain) == plain));

  state_copy copy{0, 2, 5, R"({"lr":0.1})"};
  auto c = round_trip(sys, copy);
  BOOST_TEST(c.from == 0);
  BOOST_TEST(c.from_epoch == 2);
  BOOST_TEST(c.to == 5);
  BOOST_TEST(c.params_json == copy.params_json);
}

BOOST_AUTO_TEST_CASE(fault_rules_parse_and_reject_malformed_ones) {
  auto f = FaultInjection::parse("fail_unit=1:0:2;fail_unit=3:1:0:-1;slow_worker=1:3.5;crash=after_commit:2");
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(f->enabled());
  BOOST_TEST(f->fail_unit(1, 0, 2, 0));
  BOOST_TEST(!f->fail_unit(1, 0, 2, 1));
  BOOST_TEST(f->fail_unit(3, 1, 0, 7));
  BOOST_TEST(!f->fail_unit(2, 0, 0, 0));
  BOOST_TEST(f->slowdown(1) == 3.5);
  BOOST_TEST(f->slowdown(0) == 1.0);
  for (const char* bad : {"fail_unit=1:2", "slow_worker=1:0.5", "crash", "explode=1", "fail_unit=a:b:c"})
    BOOST_TEST(!FaultInjection::parse(bad).ok(), bad);
  auto reads = FaultInjection::parse("unreadable_state=3;damage_state=2");
  BOOST_REQUIRE(reads.ok());
  BOOST_TEST(reads->unreadable_state(3));
  BOOST_TEST(!reads->unreadable_state(2));
  BOOST_TEST(reads->damage_state(2));
  BOOST_TEST(FaultInjection::parse("unreadable_state=x").status().is_invalid_argument());
  // Without the enabling variable nothing is injected.
  BOOST_TEST(!FaultInjection::instance().enabled());
}

// The rule's exception is the caller's to throw (a boundary): crash_point
// returns it as an internal Status at the K-th arrival only.
BOOST_AUTO_TEST_CASE(a_throw_rule_fails_its_kth_arrival_only) {
  auto f = FaultInjection::parse("throw=somewhere:2");
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(f->crash_point("somewhere").ok());
  BOOST_TEST(f->crash_point("elsewhere").ok());
  auto thrown = f->crash_point("somewhere");
  BOOST_TEST(thrown.is_internal());
  BOOST_TEST(thrown.message().find("thrown at somewhere") != std::string::npos, thrown.message());
  BOOST_TEST(f->crash_point("somewhere").ok());
  BOOST_TEST(!FaultInjection::parse("throw=a:b:c").ok());
}

// A group commit ends its batch where a test's crash rule stops the
// process: stops_at looks ahead of the arrivals without counting one.
BOOST_AUTO_TEST_CASE(stops_at_sees_the_crash_ahead_without_arriving) {
  auto f = FaultInjection::parse("crash=after_commit:3;fatal_signal=other:1");
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(!f->stops_at("after_commit", 1));
  BOOST_TEST(!f->stops_at("after_commit", 2));
  BOOST_TEST(f->stops_at("after_commit", 3));
  BOOST_TEST(f->stops_at("after_commit", 3));       // looking did not arrive
  BOOST_TEST(f->crash_point("after_commit").ok());  // arrives; no rule to throw here
  BOOST_TEST(f->stops_at("after_commit", 2));
  BOOST_TEST(!f->stops_at("after_commit", 3));
  BOOST_TEST(f->stops_at("other", 1));
  BOOST_TEST(!f->stops_at("before_commit", 1));
}

// The group commit: units written in one synced batch keep their
// order (sequence numbers, unit log), each config's newest state is the last
// one written for it, and the two-newest retention counts the batch's states.
BOOST_AUTO_TEST_CASE(a_group_commit_keeps_order_states_and_retention) {
  TempStoreDir dir;
  {
    auto store = StateStore::open(dir.path.string(), true).value();
    store->put_initial_state(0, "init0");
    store->put_initial_state(1, "init1");
    BOOST_REQUIRE(store->commit_unit(entry(0, 0, 0), "a0").ok());
    std::string a1 = "a1", b0 = "b0", a2 = "a2", b1 = "b1";
    std::vector<StateStore::UnitCommit> batch{
        {entry(0, 1, 0), &a1}, {entry(1, 0, 0), &b0}, {entry(0, 0, 1), &a2}, {entry(1, 1, 0), &b1}};
    auto stored = store->commit_units(batch);
    BOOST_REQUIRE_MESSAGE(stored.ok(), stored.error());
    BOOST_REQUIRE(stored->size() == 4u);
    for (size_t i = 0; i < 4; ++i) {
      BOOST_TEST(stored->at(i).seq == static_cast<int64_t>(i) + 2);
      BOOST_TEST(stored->at(i).config == batch[i].entry.config);
      BOOST_TEST(stored->at(i).partition == batch[i].entry.partition);
      BOOST_TEST(stored->at(i).state_checksum == checksum_of(*batch[i].state));
    }
    BOOST_TEST(*store->latest_state(0) == "a2");
    BOOST_TEST(*store->latest_state(1) == "b1");
    auto log = store->unit_log();
    BOOST_REQUIRE(log.size() == 5u);
    for (size_t i = 0; i < log.size(); ++i) BOOST_TEST(log[i].seq == static_cast<int64_t>(i) + 1);
    BOOST_TEST(log[3].config == 0);
    BOOST_TEST(log[3].epoch == 1);
    // The next single commit continues the sequence.
    BOOST_TEST(store->commit_unit(entry(1, 0, 1), "b2")->seq == 6);
    BOOST_TEST(store->commit_units({})->empty());
  }
  // Config 0 wrote a0 then a1 and a2 in the batch: a1 and a2 are kept (a2's
  // fallback is a1); config 1 keeps b1 and b2.
  rocksdb::DB* db = nullptr;
  BOOST_REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.path.string(), &db).ok());
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  std::vector<std::string> values;
  for (it->Seek("state/"); it->Valid() && it->key().starts_with("state/"); it->Next()) {
    auto v = it->value().ToString();
    values.push_back(v.substr(v.find('\n') + 1));
  }
  it.reset();
  delete db;
  BOOST_TEST((values == std::vector<std::string>{"a1", "a2", "b1", "b2"}));
}

// A new config is durable before it is scheduled: its split merged into the
// meta, its initial state, its record and, when counted, its parameters; a
// split planned with the run's own configs is not written again.
BOOST_AUTO_TEST_CASE(a_new_config_is_stored_with_its_split_state_record_and_parameter_count) {
  TempStoreDir dir;
  auto store = StateStore::open(dir.path.string(), true);
  BOOST_REQUIRE_MESSAGE(store.ok(), store.error());
  BOOST_REQUIRE(record_pipeline_stages(**store, 0, 3).ok());
  NewConfig split{4, {{"lr", 0.1}}, 2, "framed", 1234};
  BOOST_REQUIRE(store_new_config(**store, split).ok());
  NewConfig whole{5, {{"lr", 0.2}}, 1, "plain", std::nullopt};
  BOOST_REQUIRE(store_new_config(**store, whole).ok());
  NewConfig planned{6, {{"lr", 0.3}}, 2, "framed too", std::nullopt, true};
  BOOST_REQUIRE(store_new_config(**store, planned).ok());

  auto stages = stored_pipeline_stages(**store);
  BOOST_REQUIRE_MESSAGE(stages.ok(), stages.error());
  BOOST_TEST((*stages == std::map<ConfigId, int32_t>{{0, 3}, {4, 2}}));
  BOOST_TEST(*(*store)->initial_state(4) == "framed");
  BOOST_TEST(*(*store)->initial_state(5) == "plain");
  BOOST_TEST(*(*store)->get_meta("parameters/4") == "1234");
  BOOST_TEST(!(*store)->get_meta("parameters/5").has_value());
  auto configs = (*store)->configs();
  BOOST_REQUIRE_EQUAL(configs.size(), 3u);
  for (const auto& c : configs) BOOST_TEST((c.status == ConfigStatus::running));
  BOOST_TEST(configs[0].params["lr"] == 0.1);
}
