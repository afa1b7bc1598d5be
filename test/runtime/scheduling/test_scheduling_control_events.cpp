// ExperimentControl reports what happened as typed events
// (runtime/scheduling/control_event.hpp); the line a shell logs is made from
// them, word for word as the reports and logs have always read.
#include <boost/test/unit_test.hpp>

#include "runtime/scheduling/control_event.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"

using namespace cerebro;
using Kind = ControlEvent::Kind;

BOOST_AUTO_TEST_SUITE(control_events)

BOOST_AUTO_TEST_CASE(an_epochs_line_lists_accuracy_first_then_the_named_values) {
  ControlEvent scored{Kind::epoch_scored};
  scored.config = 3;
  scored.epoch = 1;
  scored.train_loss = 0.51;
  scored.val_loss = 0.48;
  scored.val_accuracy = 0.82;
  BOOST_TEST(event_line({scored}) == "config 3 epoch 1: train_loss 0.5100 val_loss 0.4800 val_accuracy 0.8200");
  scored.val_metrics = {{"macro_f1", 0.7}, {"accuracy", 0.8}};
  BOOST_TEST(event_line({scored}) ==
             "config 3 epoch 1: train_loss 0.5100 val_loss 0.4800 val_accuracy 0.8000 val_macro_f1 0.7000");
  scored.val_metrics = {{"r2", 0.9}};  // a regression: no accuracy at all
  BOOST_TEST(event_line({scored}) == "config 3 epoch 1: train_loss 0.5100 val_loss 0.4800 val_r2 0.9000");
}

BOOST_AUTO_TEST_CASE(decisions_follow_their_cause_after_a_semicolon) {
  ControlEvent diverged{Kind::diverged};
  diverged.config = 2;
  diverged.epoch = 0;
  ControlEvent decided{Kind::decision};
  decided.decision = SearchDecision::stop(4, 0, "rung full");
  const std::string line = event_line({diverged, decided});
  BOOST_TEST(line.rfind("config 2 diverged (loss NaN/inf) in epoch 0; ", 0) == 0u, line);
  BOOST_TEST(line.substr(line.find("; ") + 2) == to_string(*decided.decision));
  BOOST_TEST(event_line({}).empty());
}

BOOST_AUTO_TEST_CASE(an_attempts_failure_names_its_unit_and_its_count) {
  ControlEvent failed{Kind::attempt_failed};
  failed.unit = Unit{1, 2, 0};
  failed.count = 1;
  failed.limit = 3;
  failed.error = "boom";
  BOOST_TEST(event_line({failed}) == "config 1 / partition 2 / epoch 0 failed (attempt 1 of 3): boom");
  failed.kind = Kind::config_gave_up;
  failed.config = 1;
  failed.count = 3;
  BOOST_TEST(event_line({failed}) == "config 1 failed after 3 attempts of config 1 / partition 2 / epoch 0: boom");
  ControlEvent pipeline{Kind::pipeline_failed};
  pipeline.attempt_id = 7;
  pipeline.unit = Unit{1, 2, 0};
  BOOST_TEST(event_line({pipeline, failed}) ==
             "pipeline attempt 7 of config 1 / partition 2 / epoch 0 failed: config 1 failed after 3 attempts of "
             "config 1 / partition 2 / epoch 0: boom");
  BOOST_TEST(find_event({pipeline, failed}, Kind::config_gave_up) != nullptr);
  BOOST_TEST(find_event({pipeline}, Kind::config_gave_up) == nullptr);
}

BOOST_AUTO_TEST_CASE(a_committed_epoch_reports_its_scores_as_an_event) {
  auto control = test::make_control(1);
  control.add_worker(0, {0});
  control.add_config(0, 1);
  auto ds = control.dispatch();
  BOOST_REQUIRE_EQUAL(ds.size(), 1u);
  UnitLogEntry e = test::entry_of(ds[0]);
  const ControlEvents events = control.on_committed(0, e);
  BOOST_REQUIRE(!events.empty());
  BOOST_TEST(static_cast<int>(events.front().kind) == static_cast<int>(Kind::epoch_scored));
  BOOST_TEST(events.front().config == 0);
  BOOST_TEST(event_line(events).rfind("config 0 epoch 0: train_loss ", 0) == 0u, event_line(events));
}

BOOST_AUTO_TEST_SUITE_END()
