// Data-parallel gangs in the scheduling core: MopBook's gang
// bookkeeping, the unit-log check's gang rules, and the gang cost model.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runtime/base/status.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"
#include "runtime/scheduling/gang_planner.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/spec/parallelism.hpp"

using namespace cerebro;
using cerebro::test::message_has;
using Member = MopBook::GangMember;

namespace {

// Three workers, worker w holds partition w; config 7 for 2 epochs, config 8 for 1.
MopBook three_by_three() {
  MopBook book(3);
  for (WorkerId w = 0; w < 3; ++w) book.add_worker(w, {w});
  book.add_config(7, 2);
  book.add_config(8, 1);
  return book;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gang_book)

BOOST_AUTO_TEST_CASE(a_gang_is_one_attempt_that_commits_whole) {
  MopBook book = three_by_three();
  std::vector<Member> gang{{0, {7, 0, 0}}, {1, {7, 1, 0}}};
  book.start_gang(gang);
  BOOST_TEST(book.in_gang(0));
  BOOST_TEST(book.in_gang(1));
  BOOST_TEST(!book.in_gang(2));
  BOOST_TEST(book.config_busy(7));
  BOOST_TEST(book.running_units(7) == 2);
  BOOST_TEST(book.remaining_units(7) == 6);  // 2 running + 1 pending + 3 next epoch
  // Isolation: worker 2 may not run config 7 alongside the gang.
  BOOST_TEST(book.eligible_units(2) == std::vector<Unit>{(Unit{8, 2, 0})}, boost::test_tools::per_element());
  CEREBRO_CHECK_CONTRACT(book.start(2, Unit{7, 2, 0}), "isolation");
  // A member alone can neither complete nor requeue.
  CEREBRO_CHECK_CONTRACT(book.complete(0, Unit{7, 0, 0}), "gang member");
  CEREBRO_CHECK_CONTRACT(book.requeue(1, Unit{7, 1, 0}), "gang member");
  // Completing part of the gang is refused: it commits whole.
  CEREBRO_CHECK_CONTRACT(book.complete_gang({{0, {7, 0, 0}}, {2, {7, 2, 0}}}), "not running");
  BOOST_TEST(!book.complete_gang(gang));  // partition 2 is still pending
  BOOST_TEST(book.units_done() == 2);
  BOOST_TEST(!book.config_busy(7));
  BOOST_TEST(!book.in_gang(0));
  BOOST_TEST(book.pending_partitions(7) == std::vector<PartitionId>{2}, boost::test_tools::per_element());
  book.start(2, Unit{7, 2, 0});
  BOOST_TEST(book.complete(2, Unit{7, 2, 0}));  // the epoch ends with the MOP unit
  BOOST_TEST(book.state(7) == ConfigState::awaiting_decision);
}

BOOST_AUTO_TEST_CASE(a_gang_ending_the_epoch_says_so) {
  MopBook book = three_by_three();
  std::vector<Member> gang{{0, {8, 0, 0}}, {1, {8, 1, 0}}, {2, {8, 2, 0}}};
  book.start_gang(gang);
  BOOST_TEST(book.complete_gang(gang));
  BOOST_TEST(book.state(8) == ConfigState::awaiting_decision);
  BOOST_TEST(book.units_done() == 3);
}

// Each misuse is a contract violation naming the member at fault, and
// can_start_gang says the same beforehand without changing the book.
BOOST_AUTO_TEST_CASE(start_gang_rejects_every_misuse_and_changes_nothing) {
  MopBook book = three_by_three();
  auto refused = [&book](const std::vector<MopBook::GangMember>& members, const std::string& why) {
    auto fits = book.can_start_gang(members);
    BOOST_TEST(fits.is_failed_precondition(), why);
    BOOST_TEST(fits.message().find(why) != std::string::npos, fits.message());
    CEREBRO_CHECK_CONTRACT(book.start_gang(members), "MopBook::start_gang: ");
    CEREBRO_CHECK_CONTRACT(book.start_gang(members), why);
  };
  refused({{0, {7, 0, 0}}}, "at least 2 members");
  refused({{0, {7, 0, 0}}, {1, {8, 1, 0}}}, "differ in config");
  refused({{0, {7, 0, 0}}, {0, {7, 1, 0}}}, "worker 0 appears twice");
  refused({{0, {7, 0, 0}}, {1, {7, 0, 0}}}, "appears twice");
  refused({{0, {7, 0, 0}}, {1, {7, 2, 0}}}, "worker 1 does not hold partition 2");
  refused({{0, {7, 0, 1}}, {1, {7, 1, 1}}}, "is in epoch 0");
  refused({{0, {9, 0, 0}}, {1, {9, 1, 0}}}, "unknown config 9");
  refused({{0, {7, 0, 0}}, {5, {7, 1, 0}}}, "unknown worker 5");
  book.start(2, Unit{8, 2, 0});
  refused({{0, {8, 0, 0}}, {1, {8, 1, 0}}}, "isolation");
  refused({{0, {7, 0, 0}}, {2, {7, 2, 0}}}, "worker 2 is busy");
  BOOST_TEST(book.can_start_gang({{0, {7, 0, 0}}, {1, {7, 1, 0}}}).ok());
  // Nothing of the refused gangs stuck.
  BOOST_TEST(!book.worker_busy(0));
  BOOST_TEST(!book.worker_busy(1));
  BOOST_TEST(book.pending_partitions(7) == (std::vector<PartitionId>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(!book.config_busy(7));
}

BOOST_AUTO_TEST_CASE(a_member_lost_fails_the_attempt_and_every_unit_is_pending_again) {
  MopBook book = three_by_three();
  std::vector<Member> gang{{0, {7, 0, 0}}, {1, {7, 1, 0}}, {2, {7, 2, 0}}};
  book.start_gang(gang);
  BOOST_TEST((book.remove_worker(1) == std::optional<Unit>{Unit{7, 1, 0}}));
  BOOST_TEST(book.config_busy(7));  // the other members still run
  // The gang cannot commit without its member.
  CEREBRO_CHECK_CONTRACT(book.complete_gang(gang), "worker 1");
  book.requeue_gang(gang);
  BOOST_TEST(!book.config_busy(7));
  BOOST_TEST(!book.worker_busy(0));
  BOOST_TEST(!book.worker_busy(2));
  BOOST_TEST(book.pending_partitions(7) == (std::vector<PartitionId>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(book.units_done() == 0);
  BOOST_TEST(book.remaining_units(7) == 6);
}

BOOST_AUTO_TEST_CASE(a_config_stopped_while_its_gang_runs_counts_nothing) {
  MopBook book = three_by_three();
  std::vector<Member> gang{{0, {7, 0, 0}}, {1, {7, 1, 0}}};
  book.start_gang(gang);
  book.stop(7);
  BOOST_TEST(!book.complete_gang(gang));
  BOOST_TEST(book.units_done() == 0);
  BOOST_TEST(book.all_done() == false);  // config 8 is left
  BOOST_TEST(!book.worker_busy(0));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gang_unit_log)

namespace {
// One partition pair, workers 0 and 1; config 0 trains epoch 0 as a gang,
// epoch 1 as two MOP units.
std::vector<UnitRecord> gang_log() {
  return {
      {0, 0, 0, 0, 0.0, 2.0, true, 5, 2}, {0, 1, 0, 1, 0.0, 2.0, true, 5, 2},  {0, 1, 1, 1, 2.0, 3.0, true},
      {0, 0, 1, 0, 3.0, 4.0, true},       {0, 0, 1, 1, 2.5, 2.9, false, 9, 2},  // a failed gang attempt: ignored
  };
}
ExpectedRun gang_expected() { return ExpectedRun{2, {{0, 2}}}; }

void expect_violation(const std::vector<UnitRecord>& log, const std::string& needle) {
  Status s = check_mop_invariants(log, gang_expected());
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(s.message().find(needle) != std::string::npos, "'" << needle << "' not in: " << s.message());
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_gangs_members_overlap_each_other_but_nothing_else) {
  Status s = check_mop_invariants(gang_log(), gang_expected());
  BOOST_TEST(s.ok(), s.message());
}

BOOST_AUTO_TEST_CASE(without_the_gang_marks_the_same_log_breaks_isolation) {
  std::vector<UnitRecord> log = gang_log();
  for (UnitRecord& r : log) r.gang = 0, r.gang_size = 0;
  expect_violation(log, "isolation");
}

BOOST_AUTO_TEST_CASE(a_gang_committed_in_part_is_named) {
  std::vector<UnitRecord> log = gang_log();
  log[0].gang_size = 3;
  log[1].gang_size = 3;
  expect_violation(log, "committed 2 of its 3 units");
}

BOOST_AUTO_TEST_CASE(a_gang_is_one_attempt_in_time_and_epoch) {
  std::vector<UnitRecord> log = gang_log();
  log[1].end_s = 2.5;
  expect_violation(log, "gang 5 is not one attempt");
  log = gang_log();
  log[1].worker = 0;
  expect_violation(log, "uses worker 0 twice");
  log = gang_log();
  log[1].gang_size = 1;
  expect_violation(log, "bad gang");
}

BOOST_AUTO_TEST_CASE(a_gang_unit_is_still_a_unit_exactly_once) {
  std::vector<UnitRecord> log = gang_log();
  log[2].partition = 0;  // epoch 1, partition 0 twice (gang-free) ...
  log[2].epoch = 0;      // ... now partition 0 of epoch 0 again, after the gang covered it
  expect_violation(log, "unit committed twice");
}

BOOST_AUTO_TEST_CASE(two_gangs_of_one_config_may_not_overlap) {
  std::vector<UnitRecord> log = gang_log();
  log[2] = {0, 1, 1, 1, 1.5, 3.0, true, 6, 2};
  log[3] = {0, 0, 1, 0, 1.5, 3.0, true, 6, 2};
  expect_violation(log, "isolation");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gang_cost_model)

BOOST_AUTO_TEST_CASE(parallelism_names_parse_and_print) {
  BOOST_TEST(parallelism_names() == (std::vector<std::string>{"auto", "mop", "data"}),
             boost::test_tools::per_element());
  BOOST_TEST((parse_parallelism("auto") == Parallelism::automatic));
  BOOST_TEST((parse_parallelism("data") == Parallelism::data));
  BOOST_TEST(!parse_parallelism("gang").has_value());
  BOOST_TEST(to_string(Parallelism::mop) == "mop");
}

BOOST_AUTO_TEST_CASE(gang_seconds_adds_one_allreduce_per_global_step) {
  GangCosts costs;
  costs.allreduce_s = 0.01;
  costs.steps_per_unit = 100;
  costs.setup_s = 0.5;
  // k = 2: 200 steps x 0.01 s x 2(1)/2, plus setup.
  BOOST_TEST(gang_seconds(10, 2, costs) == 10 + 2.0 + 0.5, boost::test_tools::tolerance(1e-12));
  // k = 4: 400 steps x 0.01 s x 2(3)/4.
  BOOST_TEST(gang_seconds(10, 4, costs) == 10 + 6.0 + 0.5, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_single_config_gangs_when_the_allreduce_is_cheap) {
  GangCosts costs;
  costs.allreduce_s = 0.001;
  costs.steps_per_unit = 100;
  GangEstimateInput in;
  in.unit_s = 10;
  in.remaining_units = 8;  // one config, 8 units left, 4 workers: MOP takes 80 s
  in.workers = 4;
  GangEstimate e = estimate_gang(in, 4, costs);
  BOOST_TEST(e.mop_finish_s == 80, boost::test_tools::tolerance(1e-12));
  // gang of 4: 10 + 400 x 0.001 x 1.5 = 10.6 s per 4 units: 2 x 10.6.
  BOOST_TEST(e.gang_finish_s == 21.2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(e.gang_wins);
}

BOOST_AUTO_TEST_CASE(no_gang_when_the_allreduce_costs_more_than_it_saves) {
  GangCosts costs;
  costs.allreduce_s = 0.2;  // 200 steps x 0.2 s = 40 s for a 10 s unit
  costs.steps_per_unit = 100;
  GangEstimateInput in;
  in.unit_s = 10;
  in.remaining_units = 8;
  in.workers = 2;
  BOOST_TEST(!estimate_gang(in, 2, costs).gang_wins);
}

BOOST_AUTO_TEST_CASE(no_gang_when_other_configs_keep_every_worker_busy) {
  GangCosts costs;
  costs.allreduce_s = 0.001;
  costs.steps_per_unit = 100;
  GangEstimateInput in;
  in.unit_s = 10;
  in.remaining_units = 8;
  in.workers = 4;
  in.other_work_s = 4000;  // 1000 s per worker of other work: the gang's extra work only delays it
  in.other_chain_s = 80;
  GangEstimate e = estimate_gang(in, 2, costs);
  BOOST_TEST(!e.gang_wins);
  BOOST_TEST(e.gang_finish_s >= e.mop_finish_s);
}

BOOST_AUTO_TEST_CASE(the_planner_needs_measurements_under_auto) {
  MopBook book = three_by_three();
  GangCosts costs;
  costs.allreduce_s = 0.001;
  costs.steps_per_unit = 10;
  GangPlanner planner(Parallelism::automatic, costs);
  book.stop(8);                                                      // config 7 alone
  BOOST_TEST(planner.plan(0, Unit{7, 0, 0}, {1, 2}, book).empty());  // nothing measured yet
  planner.observe({0, Unit{7, 0, 0}, 10.0, 0, 100});
  std::vector<Member> gang = planner.plan(0, Unit{7, 0, 0}, {1, 2}, book);
  BOOST_TEST_REQUIRE(gang.size() == 3u);
  BOOST_TEST((gang[1].worker == 1 && gang[1].unit == Unit{7, 1, 0}));
  BOOST_TEST((gang[2].worker == 2 && gang[2].unit == Unit{7, 2, 0}));
  BOOST_TEST_REQUIRE(planner.last_estimate().has_value());
  BOOST_TEST(planner.last_estimate()->gang_wins);
  book.start_gang(gang);  // the plan is a valid gang
}

BOOST_AUTO_TEST_CASE(the_planner_learns_worker_speeds_and_allreduce_costs) {
  GangPlanner planner(Parallelism::automatic, GangCosts{});
  planner.observe({0, Unit{7, 0, 0}, 10.0, 0, 100});
  planner.observe({1, Unit{7, 1, 0}, 20.0, 0, 100});  // worker 1 twice as slow as config 7's mean so far
  BOOST_TEST(*planner.unit_seconds(7, 1) > *planner.unit_seconds(7, 0));
  BOOST_TEST(planner.unit_seconds(9, 0).has_value());  // an unseen config: the mean of all units
  planner.observe_allreduce(4, 0.003);                 // 2(3)/4 = 1.5 x the 2-rank cost
  BOOST_TEST(planner.costs().allreduce_s == 0.002, boost::test_tools::tolerance(1e-12));
}

// A real gang slower than the model says (a rank's share of the batch costs
// more than a unit alone where cores slow each other) teaches the planner:
// measured 3x its estimate, the same single config no longer gangs.
BOOST_AUTO_TEST_CASE(the_planner_learns_how_much_slower_real_gangs_are_than_estimated) {
  MopBook book = three_by_three();
  GangCosts costs;
  costs.allreduce_s = 0.001;
  costs.steps_per_unit = 10;
  GangPlanner planner(Parallelism::automatic, costs);
  book.stop(8);  // config 7 alone: 6 units left on 3 workers, MOP 60 s, a gang of 3 about 20 s
  planner.observe({0, Unit{7, 0, 0}, 10.0, 0, 100});
  std::vector<Member> gang = planner.plan(0, Unit{7, 0, 0}, {1, 2}, book);
  BOOST_TEST_REQUIRE(gang.size() == 3u);
  BOOST_TEST(planner.gang_factor() == 1.0);

  // The allreduces as estimated (30 steps x 0.001 s x 2(2)/3), so only the
  // attempt's time differs. A gang of a config with no MOP unit measured
  // teaches nothing about it.
  planner.observe_gang(std::vector<Member>{{0, Unit{9, 0, 0}}, {1, Unit{9, 1, 0}}}, 20, 0.02, 50.0);
  planner.observe_allreduce(2, 0.001);
  BOOST_TEST(planner.gang_factor() == 1.0);

  planner.observe_gang(gang, 30, 0.04, 30.0);
  const double estimated = gang_seconds(10.0, 3, planner.costs());
  BOOST_TEST(planner.gang_factor() == 30.0 / estimated, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(planner.plan(0, Unit{7, 0, 0}, {1, 2}, book).empty());
  BOOST_TEST_REQUIRE(planner.last_estimate().has_value());
  BOOST_TEST(!planner.last_estimate()->gang_wins);
  BOOST_TEST(planner.last_estimate()->gang_s > 2.5 * estimated);
}

BOOST_AUTO_TEST_CASE(a_gang_as_fast_as_estimated_keeps_gangs_and_the_factor_is_bounded) {
  MopBook book = three_by_three();
  GangCosts costs;
  costs.allreduce_s = 0.001;
  costs.steps_per_unit = 10;
  GangPlanner planner(Parallelism::automatic, costs);
  book.stop(8);
  planner.observe({0, Unit{7, 0, 0}, 10.0, 0, 100});
  std::vector<Member> gang = planner.plan(0, Unit{7, 0, 0}, {1, 2}, book);
  BOOST_TEST_REQUIRE(gang.size() == 3u);
  planner.observe_gang(gang, 30, 0.04, gang_seconds(10.0, 3, planner.costs()));
  BOOST_TEST(planner.gang_factor() == 1.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(planner.plan(0, Unit{7, 0, 0}, {1, 2}, book).size() == 3u);
  for (int i = 0; i < 20; ++i) planner.observe_gang(gang, 30, 0.04, 1e6);  // absurd timings
  BOOST_TEST(planner.gang_factor() == 10.0);
}

BOOST_AUTO_TEST_CASE(mop_never_gangs_and_data_always_does_when_it_can) {
  MopBook book = three_by_three();
  GangPlanner mop(Parallelism::mop, GangCosts{});
  BOOST_TEST(mop.plan(0, Unit{7, 0, 0}, {1, 2}, book).empty());
  GangCosts two;
  two.max_gang = 2;
  GangPlanner data(Parallelism::data, two);
  std::vector<Member> gang = data.plan(0, Unit{7, 0, 0}, {2, 1}, book);  // nothing measured: data does not ask
  BOOST_TEST_REQUIRE(gang.size() == 2u);                                 // max_gang
  BOOST_TEST(gang[1].worker == 2);                                       // in the candidates' order
  book.start(1, Unit{8, 1, 0});
  BOOST_TEST(data.plan(0, Unit{7, 0, 0}, {1}, book).empty());  // worker 1 is busy: no gang
}

BOOST_AUTO_TEST_CASE(bad_costs_are_refused_by_name) {
  GangCosts costs;
  costs.max_gang = 1;
  BOOST_TEST(GangPlanner::check(costs).is_invalid_argument());
  BOOST_TEST(GangPlanner::check(costs).message().find("max_gang") != std::string::npos);
  CEREBRO_CHECK_CONTRACT(GangPlanner(Parallelism::data, costs), "max_gang");
  costs = GangCosts{};
  costs.allreduce_s = -1;
  BOOST_TEST(GangPlanner::check(costs).is_invalid_argument());
  CEREBRO_CHECK_CONTRACT(GangPlanner(Parallelism::data, costs), "allreduce_s");
  costs = GangCosts{};
  costs.margin = 1;
  BOOST_TEST(GangPlanner::check(costs).message().find("margin") != std::string::npos);
  BOOST_TEST(GangPlanner::check(GangCosts{}).ok());
}

BOOST_AUTO_TEST_SUITE_END()

#include "runtime/store/state_store.hpp"
#include "test/support/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(gang_store)

namespace {
UnitLogEntry entry(PartitionId p, WorkerId w, bool validates = false) {
  UnitLogEntry e;
  e.config = 4;
  e.partition = p;
  e.epoch = 0;
  e.worker = w;
  e.examples = 100;
  e.has_validation = validates;
  e.start_s = 1;
  e.end_s = 3;
  return e;
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_gang_commits_its_units_and_one_state_in_one_batch) {
  cerebro::testing::TempDir dir;
  auto opened = StateStore::open(dir.file("state"), true);
  BOOST_TEST_REQUIRE(opened.ok(), opened.error());
  StateStore& store = **opened;
  BOOST_TEST_REQUIRE(store.commit_unit(entry(2, 0), "alone").ok());
  auto gang = store.commit_gang({entry(0, 0), entry(1, 1, true)}, "gang state");
  BOOST_TEST_REQUIRE(gang.ok(), gang.error());
  std::vector<UnitLogEntry> log = store.unit_log();
  BOOST_TEST_REQUIRE(log.size() == 3u);
  BOOST_TEST(log[0].gang == 0);
  BOOST_TEST(log[1].gang == log[1].seq);  // the gang's id: its first seq
  BOOST_TEST(log[2].gang == log[1].seq);
  BOOST_TEST(log[1].gang_size == 2);
  BOOST_TEST(log[2].gang_size == 2);
  BOOST_TEST(log[1].state_checksum == log[2].state_checksum);
  auto latest = store.latest_state(4);
  BOOST_TEST_REQUIRE(latest.ok(), latest.error());
  BOOST_TEST(*latest == "gang state");
  // The JSON round trip keeps the marks, and a MOP entry has none.
  BOOST_TEST(unit_log_entry_from_json(to_json(log[2])).value().gang == log[1].seq);
  BOOST_TEST(!to_json(log[0]).contains("gang"));
  // The unit-log check sees one epoch done: a unit alone and a gang of two.
  std::vector<UnitRecord> records;
  for (const UnitLogEntry& e : log) {
    // The unit alone ran before the gang (the entries here all say [1 s, 3 s]).
    double start = e.gang ? e.start_s : 0, end = e.gang ? e.end_s : 1;
    records.push_back({e.config, e.partition, e.epoch, e.worker, start, end, true, e.gang, e.gang_size});
  }
  Status s = check_mop_invariants(records, ExpectedRun{3, {{4, 1}}});
  BOOST_TEST(s.ok(), s.message());
}

BOOST_AUTO_TEST_CASE(a_gang_of_one_or_of_mixed_configs_is_refused_and_nothing_written) {
  cerebro::testing::TempDir dir;
  auto opened = StateStore::open(dir.file("state"), true);
  BOOST_TEST_REQUIRE(opened.ok(), opened.error());
  StateStore& store = **opened;
  auto one = store.commit_gang({entry(0, 0)}, "s");
  BOOST_TEST_REQUIRE(!one.ok());
  BOOST_TEST(one.error().find("at least 2 units") != std::string::npos, one.error());
  UnitLogEntry other = entry(1, 1);
  other.config = 5;
  auto mixed = store.commit_gang({entry(0, 0), other}, "s");
  BOOST_TEST_REQUIRE(!mixed.ok());
  BOOST_TEST(mixed.error().find("one config and epoch") != std::string::npos, mixed.error());
  BOOST_TEST(store.unit_log().empty());
}

BOOST_AUTO_TEST_SUITE_END()
