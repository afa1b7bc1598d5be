#include <boost/test/unit_test.hpp>

#include "runtime/experiment_control.hpp"
#include "runtime/randomized_policy.hpp"

using namespace cerebro;

namespace {

ExperimentControl make_control(int partitions, int retries = 3) {
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, retries,
                           make_policy("randomized", 1), std::make_unique<FixedEpochsProcedure>());
}

UnitLogEntry committed(const Dispatch& d, double accuracy = 0.5, const std::string& status = "ok") {
  UnitLogEntry e;
  e.config = d.unit.config;
  e.partition = d.unit.partition;
  e.epoch = d.unit.epoch;
  e.worker = d.worker;
  e.status = status;
  e.examples = 10;
  e.train_loss = 1;
  e.has_validation = d.validate;
  e.val_accuracy = accuracy;
  return e;
}

}  // namespace

BOOST_AUTO_TEST_CASE(unit_seeds_depend_on_the_unit_only) {
  BOOST_TEST(unit_seed(1, {0, 1, 2}) == unit_seed(1, {0, 1, 2}));
  BOOST_TEST(unit_seed(1, {0, 1, 2}) != unit_seed(1, {0, 2, 1}));
  BOOST_TEST(unit_seed(1, {0, 1, 2}) != unit_seed(2, {0, 1, 2}));
}

BOOST_AUTO_TEST_CASE(last_unit_of_an_epoch_validates_and_configs_complete) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_config(0, 2);
  int validations = 0;
  while (!control.all_done()) {
    auto ds = control.dispatch();
    BOOST_REQUIRE_EQUAL(ds.size(), 1u);  // one config: isolation leaves one unit at a time
    if (ds[0].validate) {
      ++validations;
      BOOST_TEST(!control.on_committed(0, committed(ds[0], 0.6)).empty());
    } else {
      BOOST_TEST(control.on_committed(0, committed(ds[0])).empty());
    }
  }
  BOOST_TEST(validations == 2);
  BOOST_TEST(control.outcomes().at(0).status == "completed");
  BOOST_TEST(control.best()->first == 0);
  BOOST_TEST(control.units_done() == 4);
}

BOOST_AUTO_TEST_CASE(failed_units_are_retried_then_fail_their_config) {
  auto control = make_control(1, 3);
  control.add_worker(0, {0});
  control.add_config(0, 1);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto ds = control.dispatch();
    BOOST_REQUIRE_EQUAL(ds.size(), 1u);
    BOOST_TEST(ds[0].attempt == attempt);
    control.on_failed(0, ds[0].unit, "boom");
  }
  BOOST_TEST(control.all_done());
  BOOST_TEST(control.outcomes().at(0).status == "failed");
  BOOST_TEST(control.outcomes().at(0).error == "boom");
}

BOOST_AUTO_TEST_CASE(a_diverged_unit_ends_its_config_and_is_not_the_best) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  control.add_config(1, 1);
  while (!control.all_done()) {
    for (const auto& d : control.dispatch())
      control.on_committed(d.worker, committed(d, 0.9, d.unit.config == 1 ? "diverged" : "ok"));
  }
  BOOST_TEST(control.outcomes().at(1).status == "diverged");
  BOOST_TEST(control.outcomes().at(0).status == "completed");
  BOOST_TEST(control.best()->first == 0);
}

BOOST_AUTO_TEST_CASE(a_lost_worker_gives_its_unit_back) {
  auto control = make_control(1);
  control.add_worker(0, {0});
  control.add_worker(1, {0});
  control.add_config(0, 1);
  auto ds = control.dispatch();
  BOOST_REQUIRE_EQUAL(ds.size(), 1u);
  control.remove_worker(ds[0].worker);
  auto again = control.dispatch();
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(again[0].unit == ds[0].unit);
  BOOST_TEST(again[0].worker != ds[0].worker);
}
