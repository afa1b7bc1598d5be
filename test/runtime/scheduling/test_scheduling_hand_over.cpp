// A worker's next unit does not wait for the previous unit's
// commit. The book and the control hand a unit over for commit when its result
// arrives: the worker is free, the config stays busy until the commit answers
// ("durable before acknowledged": nothing counts the unit before), a failed
// commit requeues the unit, and a worker lost meanwhile leaves at once.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/store/run_summary.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"

using namespace cerebro;
using cerebro::test::entry_of;
using cerebro::test::make_control;
using cerebro::test::message_has;

BOOST_AUTO_TEST_SUITE(hand_over)

BOOST_AUTO_TEST_CASE(the_book_frees_the_worker_and_keeps_the_config_busy_until_the_commit) {
  MopBook book(1);
  book.add_worker(0, {0});
  book.add_config(10, 2);
  book.add_config(11, 2);
  const Unit a{10, 0, 0};
  book.start(0, a);
  book.hand_over(0, a);
  BOOST_TEST(!book.worker_busy(0));
  BOOST_TEST(book.config_busy(10));
  BOOST_TEST((book.handed_over(10) == a));
  BOOST_TEST(book.handed_over_units() == 1);
  BOOST_TEST(book.pending_partitions(10).empty());  // neither pending ...
  BOOST_TEST(!book.running_on(0).has_value());      // ... nor on a worker
  BOOST_TEST(book.remaining_units(10) == 2);        // but not done either
  BOOST_TEST(book.units_done() == 0);
  // The worker may take config 11's unit, never one of config 10.
  auto eligible = book.eligible_units(0);
  BOOST_REQUIRE_EQUAL(eligible.size(), 1u);
  BOOST_TEST(eligible[0].config == 11);
  book.start(0, Unit{11, 0, 0});
  // The commit answers: the unit counts, the config's epoch ends.
  BOOST_TEST(book.complete_handed_over(a));
  BOOST_TEST(!book.config_busy(10));
  BOOST_TEST(book.units_done() == 1);
  BOOST_TEST(book.handed_over_units() == 0);
  CEREBRO_CHECK_CONTRACT(book.complete_handed_over(a), "not handed over");
}

BOOST_AUTO_TEST_CASE(the_book_refuses_misuse_of_a_hand_over) {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_worker(1, {0, 1});
  book.add_config(10, 1);
  const Unit a{10, 0, 0};
  CEREBRO_CHECK_CONTRACT(book.hand_over(0, a), "idle");
  book.start(0, a);
  CEREBRO_CHECK_CONTRACT(book.hand_over(1, a), "worker 1 is idle");
  CEREBRO_CHECK_CONTRACT(book.hand_over(0, Unit{10, 1, 0}), "running");
  book.hand_over(0, a);
  // Isolation holds while the unit commits: no other worker starts config 10.
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{10, 1, 0}), "committing");
  BOOST_TEST(book.eligible_units(1).empty());
  CEREBRO_CHECK_CONTRACT(book.complete(0, a), "idle");
  CEREBRO_CHECK_CONTRACT(book.requeue_handed_over(Unit{10, 1, 0}), "not handed over");
}

BOOST_AUTO_TEST_CASE(a_failed_commit_makes_the_unit_pending_again) {
  MopBook book(1);
  book.add_worker(0, {0});
  book.add_config(10, 1);
  const Unit a{10, 0, 0};
  book.start(0, a);
  book.hand_over(0, a);
  BOOST_TEST(!book.all_done());
  book.requeue_handed_over(a);
  BOOST_TEST(!book.config_busy(10));
  BOOST_TEST(book.pending_partitions(10) == std::vector<PartitionId>{0});
  BOOST_TEST(book.units_done() == 0);
  BOOST_REQUIRE_EQUAL(book.eligible_units(0).size(), 1u);
}

BOOST_AUTO_TEST_CASE(a_worker_removed_during_a_commit_leaves_the_unit_to_its_commit) {
  MopBook book(1);
  book.add_worker(0, {0});
  book.add_config(10, 1);
  const Unit a{10, 0, 0};
  book.start(0, a);
  book.hand_over(0, a);
  BOOST_TEST(!book.remove_worker(0).has_value());  // nothing goes back to the queue
  BOOST_TEST(book.pending_partitions(10).empty());
  BOOST_TEST(!book.all_done());  // the commit has not answered yet
  BOOST_TEST(book.complete_handed_over(a));
  BOOST_TEST(book.units_done() == 1);
  book.advance(10);
  BOOST_TEST(book.all_done());
}

BOOST_AUTO_TEST_CASE(a_config_stopped_during_its_commit_does_not_count_the_unit) {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_config(10, 1);
  const Unit a{10, 0, 0};
  book.start(0, a);
  book.hand_over(0, a);
  book.stop(10);
  BOOST_TEST(!book.all_done());
  BOOST_TEST(!book.complete_handed_over(a));
  BOOST_TEST(book.units_done() == 0);
  BOOST_TEST(book.all_done());
}

// One worker holding the only partition, two configs of two epochs: the
// worker trains config B while config A's unit commits, and A is dispatched
// again only once its commit answered.
BOOST_AUTO_TEST_CASE(the_control_dispatches_the_next_unit_while_the_previous_one_commits) {
  auto control = make_control(1);
  control.add_worker(0, {0});
  control.add_config(10, 2);
  control.add_config(11, 2);
  auto first = control.dispatch();
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  const ConfigId a = first[0].unit.config, b = a == 10 ? 11 : 10;
  control.on_result(0, first[0].unit);
  auto second = control.dispatch();  // before a's commit answers
  BOOST_REQUIRE_EQUAL(second.size(), 1u);
  BOOST_TEST(second[0].worker == 0);
  BOOST_TEST(second[0].unit.config == b);
  control.on_result(0, second[0].unit);
  // Both configs commit: nothing may start (a's epoch 1 needs a's commit).
  BOOST_TEST(control.dispatch().empty());
  BOOST_TEST(control.units_done() == 0);
  control.on_committed(0, entry_of(first[0]));
  BOOST_TEST(control.units_done() == 1);
  auto third = control.dispatch();
  BOOST_REQUIRE_EQUAL(third.size(), 1u);
  BOOST_TEST(third[0].unit.config == a);
  BOOST_TEST(third[0].unit.epoch == 1);
  // b's commit answers while a's epoch 1 trains: b is free again.
  control.on_committed(0, entry_of(second[0]));
  control.on_result(0, third[0].unit);
  auto fourth = control.dispatch();
  BOOST_REQUIRE_EQUAL(fourth.size(), 1u);
  BOOST_TEST(fourth[0].unit.config == b);
  control.on_result(0, fourth[0].unit);
  BOOST_TEST(!control.all_done());
  control.on_committed(0, entry_of(fourth[0]));
  control.on_committed(0, entry_of(third[0]));
  BOOST_TEST(control.units_done() == 4);
  BOOST_TEST(control.all_done());
}

BOOST_AUTO_TEST_CASE(the_control_requeues_a_unit_whose_commit_failed) {
  auto control = make_control(1, 2);
  control.add_worker(0, {0});
  control.add_config(10, 1);
  auto first = control.dispatch();
  BOOST_REQUIRE_EQUAL(first.size(), 1u);
  control.on_result(0, first[0].unit);
  BOOST_TEST(control.dispatch().empty());
  auto line = event_line(control.on_commit_failed(first[0].unit, "commit failed: disk full"));
  BOOST_TEST(line.find("attempt 1 of 2") != std::string::npos, line);
  auto again = control.dispatch();
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST((again[0].unit == first[0].unit));
  BOOST_TEST(again[0].attempt == 1);
  control.on_result(0, again[0].unit);
  control.on_committed(0, entry_of(again[0]));
  BOOST_TEST(control.units_done() == 1);
  BOOST_TEST(control.all_done());
}

// The worker is lost while its unit commits: it leaves at once (a worker
// that dies is not waited for), and the unit still commits exactly once.
BOOST_AUTO_TEST_CASE(a_worker_lost_during_a_commit_leaves_at_once_and_the_unit_commits_once) {
  for (bool died : {false, true}) {
    auto control = make_control(1);
    control.add_worker(0, {0});
    control.add_worker(1, {0});
    control.add_config(10, 1);
    auto first = control.dispatch();
    BOOST_REQUIRE_EQUAL(first.size(), 1u);
    const WorkerId w = first[0].worker, other = w == 0 ? 1 : 0;
    control.on_result(w, first[0].unit);
    if (died) {
      BOOST_TEST(control.on_worker_died(w, "gone").empty());  // no unit of it failed
    } else {
      control.remove_worker(w);
    }
    BOOST_TEST(!control.book().has_worker(w));
    BOOST_TEST(control.dispatch().empty());  // the unit is not pending again
    control.on_committed(w, entry_of(first[0]));
    BOOST_TEST(control.units_done() == 1);
    BOOST_TEST(control.all_done());
    BOOST_TEST(control.dispatch().empty());
    BOOST_TEST(!control.book().worker_busy(other));
  }
}

// The unit log's check: a worker's next unit may start while the previous
// one commits (start_s .. worker_end_s), never while it trains.
BOOST_AUTO_TEST_CASE(the_unit_log_check_reads_the_workers_time_up_to_the_result) {
  ExpectedRun expected{1, {{10, 1}, {11, 1}}};
  UnitRecord a{10, 0, 0, 0, 0.0, 2.0, true, 0, 0, 1.5};
  UnitRecord b{11, 0, 0, 0, 1.5, 3.0, true, 0, 0, 2.9};
  BOOST_TEST(check_mop_invariants({a, b}, expected).ok());
  UnitRecord early = b;
  early.start_s = 1.4;  // while a still trained on worker 0
  auto s = check_mop_invariants({a, early}, expected);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("one unit per worker") != std::string::npos, s.message());
  UnitRecord outside = a;
  outside.worker_end_s = 2.5;  // after its commit
  BOOST_TEST(!check_mop_invariants({outside, b}, expected).ok());
  // Without a worker end (older logs), the span is the worker's.
  UnitRecord old_a{10, 0, 0, 0, 0.0, 2.0, true};
  BOOST_TEST(!check_mop_invariants({old_a, b}, expected).ok());
}

// summary.json: hop_overhead_fraction over the workers' time, the old
// figure over the durable spans as span_overhead_fraction; the tail counts a
// worker free once its result arrived. Older entries (no result_s) read as
// before.
BOOST_AUTO_TEST_CASE(the_summary_measures_overhead_and_tail_over_the_workers_time) {
  auto unit = [](WorkerId w, ConfigId c, double start, double result, double end, double train) {
    UnitLogEntry e;
    e.worker = w;
    e.config = c;
    e.start_s = start;
    e.result_s = result;
    e.end_s = end;
    e.train_s = train;
    return e;
  };
  // Worker 0: 0..10 (commit to 11), 10..20 (commit to 21). Worker 1: 0..20.
  std::vector<UnitLogEntry> log = {unit(0, 1, 0, 10, 11, 9.5), unit(0, 2, 10, 20, 21, 9.5),
                                   unit(1, 3, 0, 20, 20.5, 19)};
  RunFacts facts;
  facts.workers = 2;
  facts.wall_s = 21;
  facts.unit_span_s = 11 + 11 + 20.5;
  auto summary = build_summary(facts, {}, log, nullptr);
  BOOST_TEST(summary["unit_occupied_s"].get<double>() == 40.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(summary["hop_overhead_fraction"].get<double>() == 1 - 38.0 / 40.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(summary["span_overhead_fraction"].get<double>() == 1 - 38.0 / 42.5, boost::test_tools::tolerance(1e-9));
  // Both workers busy until 20 s: the tail is the last commit's second.
  ScheduleTail tail = schedule_tail(log, 2);
  BOOST_TEST(tail.tail_start_s == 20.0);
  BOOST_TEST(tail.last_end_s == 21.0);
  BOOST_TEST(tail.tail_idle_worker_s == 2.0, boost::test_tools::tolerance(1e-9));

  // An entry of an older log has no result_s: its end_s is the worker's end.
  auto json = to_json(log[0]);
  BOOST_TEST(json["result_s"].get<double>() == 10.0);
  json.erase("result_s");
  auto old = unit_log_entry_from_json(json).value();
  BOOST_TEST(old.result_s < 0);
  BOOST_TEST(old.worker_end_s() == 11.0);
  BOOST_TEST(unit_log_entry_from_json(to_json(log[0])).value().worker_end_s() == 10.0);
}

BOOST_AUTO_TEST_SUITE_END()
