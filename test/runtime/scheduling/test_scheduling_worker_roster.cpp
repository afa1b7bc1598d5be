// WorkerRoster and KeptStates: the scheduler actor's protocol around
// ExperimentControl as plain code (who commits, leaves and drains; whose
// states are kept and read ahead). No actors.
#include <boost/test/unit_test.hpp>

#include "runtime/run/run_control.hpp"
#include "runtime/scheduling/kept_states.hpp"
#include "runtime/scheduling/worker_roster.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"

using namespace cerebro;
using cerebro::test::entry_of;
using Step = WorkerRoster::GangStep;

namespace {

// A control whose configs train as data-parallel gangs whenever they can.
ExperimentControl gang_control(int partitions) {
  auto control = test::make_control(partitions);
  ClusterSpec cluster;
  cluster.max_gang = 8;
  control.set_parallelism(Parallelism::data, gang_costs(cluster));
  return control;
}

// Workers 0 and 1 holding both partitions, one config of one epoch, its gang
// started (and begun, its state read, unless `begun` is false).
struct GangFixture {
  ExperimentControl control = gang_control(2);
  WorkerRoster roster{control};
  GangDispatch gang;
  explicit GangFixture(bool begun = true) {
    BOOST_REQUIRE(roster.join(0, {0, 1}));
    BOOST_REQUIRE(roster.join(1, {0, 1}));
    control.add_config(0, 1);
    auto batch = control.dispatch_all();
    BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
    gang = batch.gangs[0];
    roster.gang_started(gang);
    if (begun) BOOST_REQUIRE(roster.gang_begins(gang));
  }
  std::vector<UnitLogEntry> entries() const {
    std::vector<UnitLogEntry> out;
    for (const auto& d : gang.members) out.push_back(entry_of(d));
    return out;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(worker_roster)

BOOST_AUTO_TEST_CASE(a_worker_joins_once_and_its_holdings_go_to_the_book) {
  auto control = test::make_control(2);
  WorkerRoster roster(control);
  BOOST_TEST(roster.join(3, {0}));
  BOOST_TEST(!roster.join(3, {1}));
  BOOST_TEST((control.book().holdings(3) == std::vector<PartitionId>{0}));
  BOOST_TEST(roster.holds(3, {0, 1}));
  BOOST_TEST((control.book().holdings(3) == std::vector<PartitionId>{0, 1}));
  BOOST_TEST(!roster.holds(4, {0}));  // not a worker of the scheduler
  BOOST_TEST(!control.book().has_worker(4));
}

BOOST_AUTO_TEST_CASE(a_lost_worker_leaves_at_once_and_its_late_answer_does_not_count) {
  auto control = test::make_control(1);
  WorkerRoster roster(control);
  roster.join(0, {0});
  control.add_config(0, 1);
  auto d = control.dispatch().at(0);
  BOOST_TEST(roster.runs(0, d.unit));
  auto leave = roster.lose(0, "is gone", true);
  BOOST_REQUIRE(leave.has_value());
  BOOST_TEST(leave->worker == 0);
  BOOST_TEST(leave->why == "is gone");
  BOOST_TEST(leave->unit_failed);
  // Until the shell carried the leave out the book still runs it: the roster does not count it any more.
  BOOST_TEST(!roster.runs(0, d.unit));
  BOOST_TEST(!roster.leaving(0).has_value());  // in no gang
  control.on_worker_died(0, "worker died: is gone");
  BOOST_TEST(!roster.lose(0, "again", false).has_value());
  // No worker left, and the unit is still to do: the experiment cannot go on.
  BOOST_TEST(roster.empty());
  BOOST_TEST(roster.stranded());
}

BOOST_AUTO_TEST_CASE(a_unit_handed_over_for_commit_keeps_the_experiment_going_without_workers) {
  auto control = test::make_control(1);
  WorkerRoster roster(control);
  roster.join(0, {0});
  control.add_config(0, 1);
  auto d = control.dispatch().at(0);
  control.on_result(0, d.unit);
  auto leave = roster.lose(0, "is lost", false);
  BOOST_REQUIRE(leave.has_value());  // a unit alone is the book's once handed over
  control.remove_worker(0);
  BOOST_TEST(!roster.stranded());  // its commit may still end the experiment
  control.on_committed(0, entry_of(d));
  BOOST_TEST(control.all_done());
  BOOST_TEST(!roster.stranded());
}

BOOST_AUTO_TEST_CASE(a_member_lost_while_its_gangs_result_is_committed_leaves_only_when_the_commit_answers) {
  GangFixture f;
  BOOST_TEST((f.roster.replied(f.gang, 1, true).next == Step::wait));
  BOOST_TEST((f.roster.replied(f.gang, 0, true).next == Step::commit));
  auto members = f.roster.commit_gang(f.gang.id);
  BOOST_TEST((members == std::vector<WorkerId>{f.gang.members[0].worker, f.gang.members[1].worker}));
  BOOST_TEST(f.roster.committing(members[1]));
  BOOST_TEST(!f.roster.gang_running(f.gang.id));
  // Lost meanwhile: no leave yet (its unit must not go back to the queue: it would commit twice).
  BOOST_TEST(!f.roster.lose(members[1], "is lost", false).has_value());
  BOOST_TEST(!f.roster.has(members[1]));
  BOOST_TEST(!f.roster.stranded());
  f.control.on_gang_committed(f.gang.id, f.entries(), 10, 0.1);
  auto leaves = f.roster.commit_answered(members);
  BOOST_REQUIRE_EQUAL(leaves.size(), 1u);
  BOOST_TEST(leaves[0].worker == members[1]);
  BOOST_TEST(leaves[0].why == "is lost");
  BOOST_TEST(!f.roster.committing(members[0]));
  f.control.remove_worker(members[1]);
  BOOST_TEST(f.control.units_done() == 2);  // counted once
  BOOST_TEST(f.control.all_done());
}

BOOST_AUTO_TEST_CASE(a_failed_ranks_peers_drain_until_they_answer_then_rejoin_with_what_they_hold_then) {
  GangFixture f;
  const WorkerId w0 = f.gang.members[0].worker, w1 = f.gang.members[1].worker;
  auto reply = f.roster.replied(f.gang, 1, false);
  BOOST_TEST((reply.next == Step::fail));
  BOOST_TEST(!reply.rejoined);
  f.control.on_gang_failed(f.gang.id, "rank 1: boom");
  BOOST_TEST(f.roster.fail_gang(f.gang.id));
  BOOST_TEST(!f.roster.fail_gang(f.gang.id));  // once
  // Rank 0 has not answered: still inside the attempt, out of the schedule.
  BOOST_TEST(f.roster.draining(w0));
  BOOST_TEST(!f.control.book().has_worker(w0));
  BOOST_TEST(!f.roster.draining(w1));
  BOOST_TEST(f.control.book().has_worker(w1));
  // Nothing of the attempt counts, and only w1 takes the units meanwhile.
  BOOST_TEST(f.control.units_done() == 0);
  auto batch = f.control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.units.size(), 1u);
  BOOST_TEST(batch.units[0].worker == w1);
  // What it holds changes while it drains: it rejoins with that.
  BOOST_TEST(!f.roster.holds(w0, {1}));
  BOOST_TEST(!f.control.book().has_worker(w0));
  reply = f.roster.replied(f.gang, 0, true);  // a late good answer of the failed attempt
  BOOST_TEST(reply.rejoined);
  BOOST_TEST((reply.next == Step::ignore));
  BOOST_TEST((f.control.book().holdings(w0) == std::vector<PartitionId>{1}));
  BOOST_TEST(f.control.units_done() == 0);
}

BOOST_AUTO_TEST_CASE(a_member_lost_mid_step_fails_the_attempt_and_the_others_drain) {
  GangFixture f;
  const WorkerId w0 = f.gang.members[0].worker, w1 = f.gang.members[1].worker;
  auto leave = f.roster.lose(w1, "is gone", true);
  BOOST_REQUIRE(leave.has_value());
  auto gang = f.roster.leaving(w1);
  BOOST_REQUIRE(gang.has_value());
  BOOST_TEST(*gang == f.gang.id);
  f.control.on_worker_died(w1, "worker died: is gone");
  BOOST_TEST(!f.control.gang_running(f.gang.id));
  BOOST_TEST(f.roster.member_left(*gang, w1));
  BOOST_TEST(f.roster.draining(w0));
  BOOST_TEST(!f.control.book().has_worker(w0));
  // The survivor's answer (the collective failed) brings it back.
  auto reply = f.roster.replied(f.gang, 0, false);
  BOOST_TEST(reply.rejoined);
  BOOST_TEST((reply.next == Step::ignore));
  BOOST_TEST(f.control.book().has_worker(w0));
  BOOST_TEST(f.control.units_done() == 0);
  // Both units run again, on the survivor, from the config's last committed state.
  auto batch = f.control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.units.size(), 1u);
  BOOST_TEST(batch.units[0].worker == w0);
}

BOOST_AUTO_TEST_CASE(a_gang_that_failed_before_its_tasks_went_out_drains_nobody) {
  GangFixture f(false);
  const WorkerId w0 = f.gang.members[0].worker, w1 = f.gang.members[1].worker;
  // A member is lost while the config's state is read.
  f.roster.lose(w1, "is lost", false);
  f.roster.leaving(w1);
  f.control.remove_worker(w1);
  f.roster.member_left(f.gang.id, w1);
  BOOST_TEST(f.roster.draining(w0));
  // The state arrives: no task goes out, and w0 (never inside) rejoins at once.
  BOOST_TEST(!f.roster.gang_begins(f.gang));
  BOOST_TEST(!f.roster.draining(w0));
  BOOST_TEST(f.control.book().has_worker(w0));
}

BOOST_AUTO_TEST_CASE(a_gang_whose_state_cannot_be_read_fails_with_no_member_draining) {
  GangFixture f(false);
  BOOST_REQUIRE(f.roster.gang_begins(f.gang));  // its read failed, the attempt still runs
  f.roster.none_tasked(f.gang.id);
  f.control.on_gang_failed(f.gang.id, "cannot load the state");
  BOOST_TEST(f.roster.fail_gang(f.gang.id));
  for (const auto& d : f.gang.members) {
    BOOST_TEST(!f.roster.draining(d.worker));
    BOOST_TEST(f.control.book().has_worker(d.worker));
  }
}

BOOST_AUTO_TEST_CASE(a_pipeline_driver_lost_while_committing_leaves_after_the_commit) {
  auto control = test::make_control(1);
  WorkerRoster roster(control);
  roster.join(0, {0});
  roster.commit_started({0});
  BOOST_TEST(!roster.lose(0, "is lost", false).has_value());
  BOOST_TEST(!roster.stranded());  // a commit is still to answer
  auto leaves = roster.commit_answered({0});
  BOOST_REQUIRE_EQUAL(leaves.size(), 1u);
  BOOST_TEST(roster.commit_answered({0}).empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(kept_states)

namespace {

// Configs 0, 1, 2 waiting for their first units, config 1 running.
MopBook book_with_running_config_1() {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  for (ConfigId c = 0; c < 3; ++c) book.add_config(c, 1);
  book.start(0, Unit{1, 0, 0});
  return book;
}

}  // namespace

BOOST_AUTO_TEST_CASE(states_are_read_ahead_one_at_a_time_for_the_configs_waiting_for_units) {
  KeptStates kept(true);
  kept.want_waiting(book_with_running_config_1());
  BOOST_TEST(kept.wanted(0));
  BOOST_TEST(!kept.wanted(1));  // running: its unit brings its next state
  BOOST_TEST(kept.wanted(2));
  BOOST_TEST(kept.next_read().value_or(-1) == 0);
  BOOST_TEST(!kept.next_read().has_value());  // one at a time
  kept.read_answered(0, "state 0");
  BOOST_TEST(kept.next_read().value_or(-1) == 2);
  kept.read_failed(2);
  BOOST_TEST(!kept.next_read().has_value());
  BOOST_TEST(kept.take(0).value_or("") == "state 0");
  BOOST_TEST(!kept.take(0).has_value());  // taken out: its unit's commit brings the next
  BOOST_TEST(!kept.take(2).has_value());  // its unit reads the store
}

BOOST_AUTO_TEST_CASE(a_read_that_answers_after_its_config_was_dispatched_is_stale) {
  KeptStates kept(true);
  kept.want_waiting(book_with_running_config_1());
  BOOST_TEST(kept.next_read().value_or(-1) == 0);
  BOOST_TEST(!kept.take(0).has_value());  // dispatched before the read answered
  kept.read_answered(0, "older than what that unit makes");
  BOOST_TEST(!kept.take(0).has_value());
  BOOST_TEST(kept.next_read().value_or(-1) == 2);
}

BOOST_AUTO_TEST_CASE(a_read_that_answers_after_its_config_was_written_otherwise_is_stale) {
  KeptStates kept(true);
  kept.want_waiting(book_with_running_config_1());
  BOOST_TEST(kept.next_read().value_or(-1) == 0);
  kept.forget(0);  // e.g. a state copy writes it
  kept.read_answered(0, "older than the copy");
  BOOST_TEST(!kept.take(0).has_value());
}

BOOST_AUTO_TEST_CASE(a_state_too_large_to_keep_ends_the_reads) {
  KeptStates kept(true, DurableStateCache(100, 10));
  kept.want_waiting(book_with_running_config_1());
  BOOST_TEST(kept.next_read().value_or(-1) == 0);
  BOOST_TEST(!kept.keeps(11));
  kept.read_answered(0, std::string(11, 'x'));
  BOOST_TEST(!kept.next_read().has_value());
  BOOST_TEST(!kept.wanted(2));
  BOOST_TEST(!kept.take(0).has_value());
}

BOOST_AUTO_TEST_CASE(committed_states_go_to_the_next_unit_unless_written_otherwise) {
  KeptStates kept(true);
  kept.committed(4, "after unit 1");
  kept.committed(4, "after unit 2");
  BOOST_TEST(kept.take(4).value_or("") == "after unit 2");
  kept.committed(5, "after unit 1");
  kept.forget(5);  // a failed commit may or may not have been written
  BOOST_TEST(!kept.take(5).has_value());
}

BOOST_AUTO_TEST_CASE(disabled_keeps_nothing_and_reads_nothing_ahead) {
  KeptStates kept(false);
  kept.want_waiting(book_with_running_config_1());
  BOOST_TEST(!kept.next_read().has_value());
  BOOST_TEST(!kept.keeps(1));
  kept.committed(0, "state");
  BOOST_TEST(!kept.take(0).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
