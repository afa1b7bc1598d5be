// Reading runs that do not train (runtime/api/finished_runs.hpp): each store
// opened read-only once and its answers kept until the experiment changes
// state; and the units a poller has not seen yet (units_view's since, the
// store's log tail).
#define BOOST_TEST_MODULE api_finished_runs
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "runtime/api/api_route.hpp"
#include "runtime/api/experiment_view.hpp"
#include "runtime/api/finished_runs.hpp"
#include "runtime/store/state_store.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using namespace cerebro::api;
using cerebro::testing::TempDir;

namespace {

UnitLogEntry unit(ConfigId config, PartitionId partition, int32_t epoch) {
  UnitLogEntry e;
  e.config = config;
  e.partition = partition;
  e.epoch = epoch;
  e.start_s = epoch * 2 + partition;
  e.end_s = e.start_s + 1;
  e.examples = 10;
  return e;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(a_run_is_opened_once_and_its_answers_kept_until_it_changes_state) {
  TempDir tmp;
  const auto run_dir = tmp.path().string();
  // The writer stays open: a read-only open takes no lock.
  auto writer = StateStore::open(tmp.file("state"), true).value();
  writer->put_config({0, {{"lr", 0.1}}, ConfigStatus::completed, ""});
  writer->commit_unit(unit(0, 0, 0), "s").value();
  writer->commit_unit(unit(0, 1, 0), "s").value();

  FinishedRuns runs;
  int computed = 0;
  auto count_units = [&](const StateStore& store) -> Result<std::string> {
    ++computed;
    return std::to_string(store.unit_log().size());
  };
  for (int poll = 0; poll < 5; ++poll) {
    auto answer = runs.answer("e-1", run_dir, 1, "units", count_units);
    BOOST_REQUIRE_MESSAGE(answer.ok(), answer.error());
    BOOST_TEST(*answer == "2");
  }
  BOOST_TEST(runs.opened() == 1u, "one open for five polls");
  BOOST_TEST(computed == 1, "one answer for five polls");
  BOOST_TEST(runs.open_stores() == 1u);

  // Written after the open: not seen at the same generation, seen once the experiment changed state.
  writer->commit_unit(unit(0, 0, 1), "s").value();
  BOOST_TEST(*runs.answer("e-1", run_dir, 1, "units", count_units) == "2");
  BOOST_TEST(*runs.answer("e-1", run_dir, 2, "units", count_units) == "3");
  BOOST_TEST(runs.opened() == 2u);
  BOOST_TEST(computed == 2);
  auto store = runs.store("e-1", run_dir, 2);
  BOOST_REQUIRE(store.ok());
  BOOST_TEST((*store)->unit_log().size() == 3u);
  BOOST_TEST(runs.opened() == 2u, "the store of the same generation is the open one");

  // Dropped (the gateway saw a change of state): closed, opened again when read.
  runs.drop("e-1");
  BOOST_TEST(runs.open_stores() == 0u);
  BOOST_TEST(*runs.answer("e-1", run_dir, 2, "units", count_units) == "3");
  BOOST_TEST(runs.opened() == 3u);

  // A failed answer is not kept; a run without a store is an error naming its directory.
  int failures = 0;
  auto failing = [&](const StateStore&) -> Result<std::string> {
    ++failures;
    return Status::not_found("no config 7");
  };
  BOOST_TEST((runs.answer("e-1", run_dir, 2, "show/7", failing).code() == StatusCode::not_found));
  BOOST_TEST(!runs.answer("e-1", run_dir, 2, "show/7", failing).ok());
  BOOST_TEST(failures == 2);
  auto missing = runs.answer("e-2", tmp.file("nothing"), 1, "units", count_units);
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(has(missing.error(), tmp.file("nothing")), missing.error());
}

BOOST_AUTO_TEST_CASE(at_most_capacity_runs_stay_open_the_least_recently_read_closes) {
  TempDir tmp;
  for (const char* name : {"a", "b", "c"}) {
    std::filesystem::create_directories(tmp.file(name));
    auto store = StateStore::open(tmp.file(std::string(name) + "/state"), true).value();
    store->commit_unit(unit(0, 0, 0), "s").value();
  }
  FinishedRuns runs(2);
  BOOST_REQUIRE(runs.store("a", tmp.file("a"), 1).ok());
  BOOST_REQUIRE(runs.store("b", tmp.file("b"), 1).ok());
  BOOST_REQUIRE(runs.store("a", tmp.file("a"), 1).ok());  // a is now the most recent
  BOOST_REQUIRE(runs.store("c", tmp.file("c"), 1).ok());  // b goes
  BOOST_TEST(runs.open_stores() == 2u);
  BOOST_TEST(runs.opened() == 3u);
  BOOST_REQUIRE(runs.store("a", tmp.file("a"), 1).ok());
  BOOST_TEST(runs.opened() == 3u, "a stayed open");
  BOOST_REQUIRE(runs.store("b", tmp.file("b"), 1).ok());
  BOOST_TEST(runs.opened() == 4u, "b was closed");
}

BOOST_AUTO_TEST_CASE(a_poller_gets_the_units_after_the_ones_it_has_and_the_count) {
  TempDir tmp;
  auto store = StateStore::open(tmp.file("state"), true).value();
  for (int i = 0; i < 5; ++i) store->commit_unit(unit(i % 2, i % 2, i / 2), "s").value();
  auto log = store->unit_log();
  auto all = units_view(log);
  BOOST_TEST(all["units"].size() == 5u);
  BOOST_TEST(all["count"] == 5);
  BOOST_TEST(all["since"] == 0);
  auto tail = units_view(log, 3);
  BOOST_REQUIRE(tail["units"].size() == 2u);
  BOOST_TEST(tail["units"][0]["seq"] == log[3].seq);
  BOOST_TEST(tail["units"][1]["seq"] == log[4].seq);
  BOOST_TEST(tail["count"] == 5);
  BOOST_TEST(tail["since"] == 3);
  auto none = units_view(log, 9);
  BOOST_TEST(none["units"].empty(), "a poller ahead of the log gets nothing, and the count tells it so");
  BOOST_TEST(none["count"] == 5);

  // The store's tail by sequence number.
  auto after = store->unit_log_after(log[2].seq);
  BOOST_REQUIRE(after.size() == 2u);
  BOOST_TEST(after[0].seq == log[3].seq);
  BOOST_TEST(store->unit_log_after(0).size() == 5u);
  BOOST_TEST(store->unit_log_after(log[4].seq).empty());

  BOOST_TEST(parse_since("0").value() == 0);
  BOOST_TEST(parse_since("120").value() == 120);
  for (const char* bad : {"", "-1", "x", "3x", "1.5", "99999999999999999999999"}) {
    auto parsed = parse_since(bad);
    BOOST_REQUIRE(!parsed.ok());
    BOOST_TEST((parsed.code() == StatusCode::invalid_argument));
    BOOST_TEST(has(parsed.error(), "since"), parsed.error());
  }
}
