#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;

namespace {

ExperimentControl make_control(int partitions, int retries = 3) {
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, retries,
                           make_policy(SchedulerKind::randomized, 1), std::make_unique<FixedEpochsProcedure>());
}

UnitLogEntry committed(const Dispatch& d, double accuracy = 0.5, UnitStatus status = UnitStatus::ok) {
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
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
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
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::failed);
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
      control.on_committed(d.worker, committed(d, 0.9, d.unit.config == 1 ? UnitStatus::diverged : UnitStatus::ok));
  }
  BOOST_TEST(control.outcomes().at(1).status == ConfigStatus::diverged);
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
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

// ---- Epoch-boundary decisions and state copies (search procedures) --------

namespace {

// A procedure scripted per (config, epoch): stop, exploit from config 0's
// state after its epoch 0, or continue.
class ScriptedProcedure : public SearchProcedure {
 public:
  std::map<std::pair<ConfigId, int32_t>, SearchDecision> script;
  std::vector<ConfigId> ended;
  std::string name() const override { return "scripted"; }
  std::vector<SearchDecision> decide(const EpochOutcome& o) override {
    auto it = script.find({o.config, o.epoch});
    if (it == script.end()) return {SearchDecision::continue_training(o.config, o.epoch)};
    return {it->second};
  }
  std::vector<SearchDecision> on_config_ended(ConfigId c) override {
    ended.push_back(c);
    return {};
  }
};

ExperimentControl scripted_control(int partitions, ScriptedProcedure*& procedure) {
  auto owned = std::make_unique<ScriptedProcedure>();
  procedure = owned.get();
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, 3,
                           make_policy(SchedulerKind::randomized, 1), std::move(owned));
}

// Runs every dispatchable unit to completion, one round; returns the units run.
std::vector<Dispatch> run_round(ExperimentControl& control) {
  auto ds = control.dispatch();
  for (const auto& d : ds) control.on_committed(d.worker, committed(d, 0.5 + 0.1 * d.unit.config));
  return ds;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_epoch_end_is_recorded_as_a_decision) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_config(0, 3);
  while (!control.all_done()) run_round(control);
  auto decisions = control.take_decisions();
  BOOST_REQUIRE_EQUAL(decisions.size(), 3u);
  for (int32_t e = 0; e < 3; ++e) {
    BOOST_TEST(decisions[e].config == 0);
    BOOST_TEST(decisions[e].epoch == e);
    BOOST_TEST((decisions[e].kind == SearchDecision::Kind::continue_training));
  }
  BOOST_TEST(control.take_decisions().empty());  // taken once
}

BOOST_AUTO_TEST_CASE(a_stop_frees_the_configs_units_at_once) {
  ScriptedProcedure* procedure = nullptr;
  auto control = scripted_control(2, procedure);
  procedure->script[{1, 0}] = SearchDecision::stop(1, 0, "not promising");
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 4);
  control.add_config(1, 4);
  BOOST_TEST(control.units_total() == 16);
  std::string line;
  while (control.book().state(1) != ConfigState::stopped) {
    for (const auto& d : control.dispatch()) {
      auto event = event_line(control.on_committed(d.worker, committed(d)));
      if (d.unit.config == 1 && d.validate) line = event;
    }
  }
  BOOST_TEST(control.units_total() == 8 + 2);  // config 1 counts only its two done units
  BOOST_TEST(control.outcomes().at(1).status == ConfigStatus::stopped);
  BOOST_TEST(line.find("config 1 epoch 0: stop (not promising)") != std::string::npos);
  while (!control.all_done()) run_round(control);
  BOOST_TEST(control.units_done() == 10);
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(an_exploit_holds_its_config_until_the_copy_is_confirmed) {
  ScriptedProcedure* procedure = nullptr;
  auto control = scripted_control(1, procedure);
  const nlohmann::json params = {{"model", "mlp"}, {"lr", 0.0012}};
  procedure->script[{1, 0}] = SearchDecision::exploit(1, 0, 0, 0, params, "bottom");
  control.add_worker(0, {0});
  control.add_worker(1, {0});
  control.add_config(0, 3);
  control.add_config(1, 3);
  run_round(control);  // both configs end epoch 0 (one partition)
  auto copies = control.take_state_copies();
  BOOST_REQUIRE_EQUAL(copies.size(), 1u);
  BOOST_TEST(copies[0].to == 1);
  BOOST_TEST(copies[0].from == 0);
  BOOST_TEST(copies[0].from_epoch == 0);
  BOOST_TEST(copies[0].params == params);
  BOOST_TEST(control.copy_pending(1));
  BOOST_TEST(control.take_state_copies().empty());
  // Until confirmed, config 1 is never dispatched, while config 0 trains on.
  for (int round = 0; round < 2; ++round) {
    for (const auto& d : run_round(control)) BOOST_TEST(d.unit.config == 0);
  }
  BOOST_TEST(!control.all_done());
  BOOST_TEST(event_line(control.on_state_copied(1)) ==
             "config 1 took config 0's state after epoch 0, now model=mlp lr=0.0012");
  BOOST_TEST(!control.copy_pending(1));
  CEREBRO_CHECK_CONTRACT(control.on_state_copied(1), "no state copy to config 1 is pending");
  auto next = control.dispatch();
  BOOST_REQUIRE_EQUAL(next.size(), 1u);
  BOOST_TEST((next[0].unit == Unit{1, 0, 1}));  // its own epoch count goes on
  control.on_committed(next[0].worker, committed(next[0]));
  while (!control.all_done()) run_round(control);
  BOOST_TEST(control.outcomes().at(1).status == ConfigStatus::completed);
  auto decisions = control.take_decisions();
  BOOST_TEST(std::count_if(decisions.begin(), decisions.end(),
                           [](const SearchDecision& d) { return d.kind == SearchDecision::Kind::exploit; }) == 1);
}

BOOST_AUTO_TEST_CASE(a_failed_copy_fails_its_config) {
  ScriptedProcedure* procedure = nullptr;
  auto control = scripted_control(1, procedure);
  procedure->script[{1, 0}] = SearchDecision::exploit(1, 0, 0, 0, nlohmann::json::object(), "bottom");
  control.add_worker(0, {0});
  control.add_config(0, 1);
  control.add_config(1, 2);
  while (!control.copy_pending(1)) run_round(control);
  BOOST_TEST(event_line(control.on_state_copy_failed(1, "state of config 0 missing")).find("config 1 failed") == 0u);
  BOOST_TEST(control.outcomes().at(1).status == ConfigStatus::failed);
  BOOST_TEST((procedure->ended == std::vector<ConfigId>{1}));
  while (!control.all_done()) run_round(control);
}

BOOST_AUTO_TEST_CASE(a_decision_for_a_config_not_awaiting_it_is_refused) {
  ScriptedProcedure* procedure = nullptr;
  auto control = scripted_control(1, procedure);
  control.add_worker(0, {0});
  control.add_config(0, 2);
  control.add_config(1, 2);
  auto ds = control.dispatch();
  BOOST_REQUIRE_EQUAL(ds.size(), 1u);
  // The procedure answers the dispatched config's epoch with a decision about
  // the other config, which is not awaiting one.
  ConfigId ran = ds[0].unit.config, other = 1 - ran;
  procedure->script[{ran, 0}] = SearchDecision::stop(other, 0, "wrong config");
  CEREBRO_CHECK_CONTRACT(control.on_committed(0, committed(ds[0])), "not awaiting a decision after epoch 0");
}

BOOST_AUTO_TEST_CASE(diverged_failed_and_rejected_configs_leave_the_search) {
  ScriptedProcedure* procedure = nullptr;
  auto control = scripted_control(1, procedure);
  control.add_worker(0, {0});
  control.add_config(0, 1);
  control.add_config(1, 1);
  control.reject_config(2, "pilot check failed");
  auto ds = control.dispatch();
  control.on_committed(ds[0].worker, committed(ds[0], 0.5, UnitStatus::diverged));
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto again = control.dispatch();
    BOOST_REQUIRE_EQUAL(again.size(), 1u);
    control.on_failed(0, again[0].unit, "boom");
  }
  BOOST_TEST(control.all_done());
  BOOST_TEST((procedure->ended == std::vector<ConfigId>{2, ds[0].unit.config, 1 - ds[0].unit.config}));
}

BOOST_AUTO_TEST_CASE(progress_says_units_done_best_epochs_and_what_runs_where) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 2);
  control.add_config(1, 2);
  auto p = control.progress(12.5);
  BOOST_TEST(p.units_done == 0);
  BOOST_TEST(p.units_total == 8);
  BOOST_TEST(p.elapsed_s == 12.5);
  BOOST_TEST(p.best_config == -1);
  BOOST_TEST(p.epoch_low == 0);
  BOOST_TEST(p.epoch_high == 0);
  BOOST_TEST(p.running_workers.empty());
  BOOST_TEST(p.event.empty());

  // Both workers busy, one config each (isolation).
  std::map<WorkerId, Dispatch> running;
  for (const auto& d : control.dispatch()) running[d.worker] = d;
  BOOST_REQUIRE_EQUAL(running.size(), 2u);
  p = control.progress(13);
  BOOST_TEST(p.running_workers == std::vector<int32_t>({0, 1}));
  BOOST_TEST(p.running_units == std::vector<std::string>({to_string(running[0].unit), to_string(running[1].unit)}));

  // Config 0 finishes its first epoch while config 1's first unit still runs.
  WorkerId slow = running[0].unit.config == 1 ? 0 : 1;
  WorkerId fast = 1 - slow;
  Dispatch d = running[fast];
  for (;;) {
    control.on_committed(fast, committed(d, 0.8));
    if (control.book().epoch(0) == 1) break;
    auto next = control.dispatch();
    BOOST_REQUIRE_EQUAL(next.size(), 1u);
    BOOST_REQUIRE_EQUAL(next[0].worker, fast);
    d = next[0];
  }
  p = control.progress(20);
  BOOST_TEST(p.units_done == 2);
  BOOST_TEST(p.best_config == 0);
  BOOST_TEST(p.best_metric == 0.8);
  BOOST_TEST(p.epoch_low == 0);
  BOOST_TEST(p.epoch_high == 1);
  BOOST_TEST(p.running_workers == std::vector<int32_t>({slow}));
  BOOST_TEST(p.running_units == std::vector<std::string>({to_string(running[slow].unit)}));
}
