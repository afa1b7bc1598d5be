// MopBook: the bookkeeping that enforces the MOP invariants.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runtime/scheduling/mop_book.hpp"
#include "runtime/base/status.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"

using namespace cerebro;
using cerebro::test::message_has;

namespace {

// Two workers: 0 holds {0, 1}, 1 holds {1, 2}; configs 10 and 11, 2 epochs.
MopBook small_book() {
  MopBook book(3);
  book.add_worker(0, {0, 1});
  book.add_worker(1, {1, 2});
  book.add_config(10, 2);
  book.add_config(11, 2);
  return book;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mop_book)

BOOST_AUTO_TEST_CASE(unit_to_string_names_all_fields) {
  BOOST_TEST(to_string(Unit{3, 1, 0}) == "config 3 / partition 1 / epoch 0");
  BOOST_TEST((Unit{3, 1, 0} == Unit{3, 1, 0}));
  BOOST_TEST((Unit{3, 1, 0} != Unit{3, 1, 1}));
}

BOOST_AUTO_TEST_CASE(eligible_units_are_held_pending_and_sorted) {
  MopBook book = small_book();
  std::vector<Unit> expected{{10, 0, 0}, {10, 1, 0}, {11, 0, 0}, {11, 1, 0}};
  BOOST_TEST(book.eligible_units(0) == expected, boost::test_tools::per_element());
  book.start(0, Unit{10, 1, 0});
  BOOST_TEST(book.eligible_units(0).empty());  // worker 0 busy
  // Config 10 is busy: worker 1 may only take config 11.
  std::vector<Unit> for_one{{11, 1, 0}, {11, 2, 0}};
  BOOST_TEST(book.eligible_units(1) == for_one, boost::test_tools::per_element());
  BOOST_TEST(book.idle_workers() == std::vector<WorkerId>{1}, boost::test_tools::per_element());
  BOOST_TEST(book.config_busy(10));
  BOOST_TEST(!book.config_busy(11));
  BOOST_TEST((book.running_on(0) == Unit{10, 1, 0}));
  BOOST_TEST(!book.running_on(1).has_value());
}

BOOST_AUTO_TEST_CASE(start_rejects_every_misuse) {
  MopBook book = small_book();
  book.start(0, Unit{10, 0, 0});
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{10, 1, 0}), "isolation");
  CEREBRO_CHECK_CONTRACT(book.start(0, Unit{11, 1, 0}), "worker 0 is busy");
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{11, 0, 0}), "does not hold partition 0");
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{11, 2, 1}), "is in epoch 0");
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{11, 7, 0}), "outside 0..2");
  CEREBRO_CHECK_CONTRACT(book.start(1, Unit{99, 1, 0}), "unknown config 99");
  CEREBRO_CHECK_CONTRACT(book.start(5, Unit{11, 1, 0}), "unknown worker 5");
  BOOST_TEST(!book.complete(0, Unit{10, 0, 0}));
  // Partition 0 of config 10 is done for epoch 0: not pending any more.
  CEREBRO_CHECK_CONTRACT(book.start(0, Unit{10, 0, 0}), "not pending");
  // A failed start changed nothing.
  BOOST_TEST(book.idle_workers().size() == 2u);
  BOOST_TEST(book.units_done() == 1);
}

BOOST_AUTO_TEST_CASE(complete_and_requeue_need_the_running_unit) {
  MopBook book = small_book();
  CEREBRO_CHECK_CONTRACT(book.complete(0, Unit{10, 0, 0}), "worker 0 is idle");
  book.start(0, Unit{10, 0, 0});
  CEREBRO_CHECK_CONTRACT(book.complete(0, Unit{10, 1, 0}), "is running config 10 / partition 0 / epoch 0");
  CEREBRO_CHECK_CONTRACT(book.requeue(1, Unit{10, 0, 0}), "worker 1 is idle");
  book.requeue(0, Unit{10, 0, 0});
  BOOST_TEST(!book.config_busy(10));
  BOOST_TEST(book.pending_partitions(10) == (std::vector<PartitionId>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(book.units_done() == 0);
}

BOOST_AUTO_TEST_CASE(epochs_advance_per_config_and_finish) {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_config(1, 2);
  book.add_config(2, 1);
  BOOST_TEST(book.units_total() == 6);
  BOOST_TEST(book.remaining_units(1) == 4);
  book.start(0, Unit{1, 1, 0});
  BOOST_TEST(!book.complete(0, Unit{1, 1, 0}));
  CEREBRO_CHECK_CONTRACT(book.advance(1), "not awaiting_decision");
  book.start(0, Unit{1, 0, 0});
  BOOST_TEST(book.remaining_units(1) == 3);  // the running unit still counts
  BOOST_TEST(book.complete(0, Unit{1, 0, 0}));
  BOOST_TEST(book.state(1) == ConfigState::awaiting_decision);
  BOOST_TEST(book.remaining_units(1) == 2);
  // Awaiting a decision, config 1 offers nothing; config 2 still does.
  BOOST_TEST(book.eligible_units(0).size() == 2u);
  book.advance(1);  // no global barrier: config 2 has not even started
  BOOST_TEST(book.state(1) == ConfigState::pending_epoch);
  BOOST_TEST(book.epoch(1) == 1);
  BOOST_TEST(book.eligible_units(0).size() == 4u);
  for (PartitionId p : {0, 1}) {
    book.start(0, Unit{1, p, 1});
    book.complete(0, Unit{1, p, 1});
  }
  book.advance(1);
  BOOST_TEST(book.state(1) == ConfigState::finished);
  BOOST_TEST(book.epoch(1) == 2);
  BOOST_TEST(book.remaining_units(1) == 0);
  CEREBRO_CHECK_CONTRACT(book.advance(1), "finished");
  CEREBRO_CHECK_CONTRACT(book.stop(1), "already finished");
  BOOST_TEST(!book.all_done());
  for (PartitionId p : {1, 0}) {
    book.start(0, Unit{2, p, 0});
    book.complete(0, Unit{2, p, 0});
  }
  book.advance(2);
  BOOST_TEST(book.all_done());
  BOOST_TEST(book.units_done() == 6);
  BOOST_TEST(book.units_total() == 6);
}

BOOST_AUTO_TEST_CASE(stop_while_running_ignores_the_completion) {
  MopBook book = small_book();
  book.start(0, Unit{10, 0, 0});
  book.stop(10);
  BOOST_TEST(book.state(10) == ConfigState::stopped);
  BOOST_TEST(book.config_busy(10));  // no preemption: it still runs
  BOOST_TEST(!book.all_done());
  BOOST_TEST(!book.complete(0, Unit{10, 0, 0}));
  BOOST_TEST(book.units_done() == 0);
  BOOST_TEST(book.remaining_units(10) == 0);
  CEREBRO_CHECK_CONTRACT(book.start(0, Unit{10, 1, 0}), "stopped");
  CEREBRO_CHECK_CONTRACT(book.fail(10), "already stopped");
  // Only config 11 is planned now.
  BOOST_TEST(book.units_total() == 6);
  book.fail(11);
  BOOST_TEST(book.units_total() == 0);
  BOOST_TEST(book.all_done());
}

BOOST_AUTO_TEST_CASE(remove_worker_returns_its_unit_to_pending) {
  MopBook book = small_book();
  book.start(1, Unit{11, 2, 0});
  book.start(0, Unit{10, 0, 0});
  std::optional<Unit> lost = book.remove_worker(1);
  BOOST_TEST((lost == Unit{11, 2, 0}));
  BOOST_TEST(!book.config_busy(11));
  BOOST_TEST(book.pending_partitions(11) == (std::vector<PartitionId>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(!book.has_worker(1));
  CEREBRO_CHECK_CONTRACT(book.eligible_units(1), "unknown worker 1");
  CEREBRO_CHECK_CONTRACT(book.remove_worker(1), "unknown worker 1");
  // A stopped config's in-flight unit is dropped, not requeued.
  book.stop(10);
  BOOST_TEST(!book.remove_worker(0).has_value());
  BOOST_TEST(!book.config_busy(10));
  // Re-adding a worker, and changing holdings of a known one.
  book.add_worker(1, {2});
  BOOST_TEST(book.eligible_units(1) == (std::vector<Unit>{{11, 2, 0}}), boost::test_tools::per_element());
  book.add_worker(1, {0});
  BOOST_TEST(book.eligible_units(1) == (std::vector<Unit>{{11, 0, 0}}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(setup_misuse_throws) {
  CEREBRO_CHECK_CONTRACT(MopBook(0), "num_partitions must be >= 1");
  MopBook book(2);
  CEREBRO_CHECK_CONTRACT(book.add_worker(0, {0, 2}), "partition 2, outside 0..1");
  CEREBRO_CHECK_CONTRACT(book.add_worker(0, {-1}), "partition -1");
  book.add_config(1, 2);
  CEREBRO_CHECK_CONTRACT(book.add_config(1, 2), "already added");
  CEREBRO_CHECK_CONTRACT(book.add_config(2, 0), "epochs must be >= 1");
  CEREBRO_CHECK_CONTRACT(book.add_config(2, 2, 3), "first_epoch 3 outside");
  CEREBRO_CHECK_CONTRACT(book.state(7), "unknown config 7");
}

BOOST_AUTO_TEST_CASE(config_joins_at_first_epoch) {
  MopBook book(2);
  book.add_worker(0, {0, 1});
  book.add_config(1, 3, 2);
  book.add_config(2, 3, 3);  // already finished (e.g. resumed after its last epoch)
  BOOST_TEST(book.epoch(1) == 2);
  BOOST_TEST(book.state(2) == ConfigState::finished);
  BOOST_TEST(book.units_total() == 2);
  BOOST_TEST(book.remaining_units(1) == 2);
  BOOST_TEST(book.eligible_units(0) == (std::vector<Unit>{{1, 0, 2}, {1, 1, 2}}), boost::test_tools::per_element());
  book.start(0, Unit{1, 1, 2});
  book.complete(0, Unit{1, 1, 2});
  book.start(0, Unit{1, 0, 2});
  BOOST_TEST(book.complete(0, Unit{1, 0, 2}));
  book.advance(1);
  BOOST_TEST(book.all_done());
  BOOST_TEST(book.units_done() == book.units_total());
}

BOOST_AUTO_TEST_SUITE_END()
