// Steering an experiment by hand, in the plain logic: ExperimentControl's
// pause/resume, stop_config and add_config_by_user keep the MOP invariants
// (MopBook checks them on every call) and record what was done; and the
// key=value overrides the REPL's add and clone take.
#define BOOST_TEST_MODULE repl_control
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/search/asha.hpp"
#include "runtime/spec/steering.hpp"

using namespace cerebro;

namespace {

ExperimentControl make_control(int partitions) {
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, 3,
                           make_policy(SchedulerKind::randomized, 1), std::make_unique<FixedEpochsProcedure>());
}

UnitLogEntry committed(const Dispatch& d) {
  UnitLogEntry e;
  e.config = d.unit.config;
  e.partition = d.unit.partition;
  e.epoch = d.unit.epoch;
  e.worker = d.worker;
  e.status = UnitStatus::ok;
  e.examples = 10;
  e.train_loss = 1;
  e.has_validation = d.validate;
  e.val_accuracy = 0.5;
  return e;
}

// Completes every unit dispatched now; returns them.
std::vector<Dispatch> run_round(ExperimentControl& control) {
  auto ds = control.dispatch();
  for (const auto& d : ds) control.on_committed(d.worker, committed(d));
  return ds;
}

// Units trained per config until the experiment is done.
std::map<ConfigId, int> run_to_end(ExperimentControl& control) {
  std::map<ConfigId, int> units;
  for (int round = 0; !control.all_done() && round < 1000; ++round)
    for (const auto& d : run_round(control)) ++units[d.unit.config];
  BOOST_REQUIRE(control.all_done());
  return units;
}

}  // namespace

BOOST_AUTO_TEST_CASE(pause_dispatches_nothing_new_and_resume_continues) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 2);
  control.add_config(1, 2);
  auto running = control.dispatch();
  BOOST_REQUIRE_EQUAL(running.size(), 2u);
  BOOST_TEST(control.pause().ok());
  BOOST_TEST(control.paused());
  BOOST_TEST(!control.pause().ok(), "pausing twice is refused");
  // The running units finish and count; nothing new starts.
  for (const auto& d : running) control.on_committed(d.worker, committed(d));
  BOOST_TEST(control.units_done() == 2);
  BOOST_TEST(control.dispatch().empty());
  BOOST_TEST(!control.all_done());
  BOOST_TEST(control.resume().ok());
  BOOST_TEST(!control.resume().ok(), "resuming a running experiment is refused");
  auto units = run_to_end(control);
  BOOST_TEST(units[0] + units[1] == 6);  // 8 units in all, 2 ran before the pause
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
  auto actions = control.take_user_actions();
  BOOST_REQUIRE_EQUAL(actions.size(), 2u);
  BOOST_TEST(actions[0]["action"] == "pause");
  BOOST_TEST(actions[1]["action"] == "resume");
  BOOST_TEST(is_user_action(actions[0]));
}

BOOST_AUTO_TEST_CASE(a_stopped_config_gets_no_more_units) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 3);
  control.add_config(1, 3);
  auto first = control.dispatch();
  BOOST_REQUIRE_EQUAL(first.size(), 2u);
  const auto* of_1 = first[0].unit.config == 1 ? &first[0] : &first[1];
  // Stopped while a unit of it runs: that unit's completion is ignored.
  BOOST_TEST(control.stop_config(1).ok());
  for (const auto& d : first) control.on_committed(d.worker, committed(d));
  BOOST_TEST(control.units_done() == 1);
  auto units = run_to_end(control);
  BOOST_TEST(units.count(1) == 0u, "config 1 ran units after its stop");
  BOOST_TEST(units[0] == 5);
  BOOST_TEST(control.outcomes().at(1).status == ConfigStatus::stopped);
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
  auto actions = control.take_user_actions();
  BOOST_REQUIRE_EQUAL(actions.size(), 1u);
  BOOST_TEST(actions[0]["action"] == "stop");
  BOOST_TEST(actions[0]["config"] == 1);
  BOOST_TEST(actions[0]["epoch"] == of_1->unit.epoch);
  // Refusals change nothing.
  BOOST_TEST(!control.stop_config(1).ok(), "an ended config cannot be stopped");
  BOOST_TEST(!control.stop_config(0).ok(), "a completed config cannot be stopped");
  auto unknown = control.stop_config(7);
  BOOST_TEST(!unknown.ok());
  BOOST_TEST(unknown.message().find("no config 7") != std::string::npos);
  BOOST_TEST(control.take_user_actions().empty());
}

BOOST_AUTO_TEST_CASE(an_added_config_completes_all_its_epochs) {
  auto control = make_control(3);
  control.add_worker(0, {0, 1, 2});
  control.add_worker(1, {0, 1, 2});
  control.add_config(0, 2);
  for (int i = 0; i < 3; ++i) run_round(control);  // config 0 is well into its run
  BOOST_TEST(control.add_config_by_user(5, 2, {{"lr", 0.01}}).ok());
  auto units = run_to_end(control);
  BOOST_TEST(units[5] == 6, "the added config trained every partition in each of its 2 epochs");
  BOOST_TEST(control.outcomes().at(5).status == ConfigStatus::completed);
  BOOST_TEST(control.units_total() == 12);
  auto actions = control.take_user_actions();
  BOOST_REQUIRE_EQUAL(actions.size(), 1u);
  BOOST_TEST(actions[0]["action"] == "add");
  BOOST_TEST(actions[0]["params"]["lr"] == 0.01);
  BOOST_TEST(actions[0]["cloned_from"] == -1);
}

BOOST_AUTO_TEST_CASE(a_clone_is_a_new_config_that_names_its_parent) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_config(0, 1);
  BOOST_TEST(control.add_config_by_user(1, 1, {{"lr", 0.001}}, 0).ok());
  BOOST_TEST(control.take_user_actions().at(0)["cloned_from"] == 0);
  BOOST_TEST(!control.add_config_by_user(1, 1, {}).ok(), "an id in use is refused");
  BOOST_TEST(!control.add_config_by_user(2, 1, {}, 9).ok(), "an unknown parent is refused");
  BOOST_TEST(!control.add_config_by_user(2, 0, {}).ok(), "zero epochs are refused");
  auto units = run_to_end(control);
  BOOST_TEST(units[1] == 2);
}

BOOST_AUTO_TEST_CASE(configs_are_added_only_to_fixed_epoch_searches) {
  ExperimentControl control(1, 1, ExperimentControl::Metric::val_accuracy, 3, make_policy(SchedulerKind::randomized, 1),
                            std::make_unique<AshaProcedure>(AshaOptions{4, 1, 2, SearchMetric::val_accuracy}));
  control.add_worker(0, {0});
  control.add_config(0, 4);
  auto refused = control.add_config_by_user(1, 4, {});
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.message().find("asha") != std::string::npos);
  BOOST_TEST(control.stop_config(0).ok(), "stopping works with any procedure");
  BOOST_TEST(control.all_done());
}

BOOST_AUTO_TEST_CASE(settings_override_parameters_as_json_or_words) {
  nlohmann::json base{{"model", "mlp"}, {"lr", 0.001}, {"hidden", {64}}};
  auto out = apply_settings(base, {"lr=0.01", "hidden=[128,64]", "optimizer=sgd", "nesterov=true"});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST((*out)["lr"] == 0.01);
  BOOST_TEST((*out)["hidden"] == nlohmann::json::array({128, 64}));
  BOOST_TEST((*out)["optimizer"] == "sgd");
  BOOST_TEST((*out)["nesterov"] == true);
  BOOST_TEST((*out)["model"] == "mlp");
  for (const auto& [bad, says] :
       std::map<std::string, std::string>{{"lr", "not key=value"}, {"=3", "no key"}, {"lr=", "no value"}}) {
    auto r = apply_settings(base, {bad});
    BOOST_TEST(!r.ok());
    BOOST_TEST(r.error().find(says) != std::string::npos, r.error());
  }
  auto twice = apply_settings(base, {"lr=1", "lr=2"});
  BOOST_TEST(!twice.ok());
  BOOST_TEST(twice.error().find("twice") != std::string::npos);
}
