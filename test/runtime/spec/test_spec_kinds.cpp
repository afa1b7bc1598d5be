// The spec's enumerated kinds: each name round-trips through its enum, and the
// scheduler table is the one list the spec, the policy factory and `simulate`
// read.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/spec/scheduler_kind.hpp"
#include "runtime/spec/metric.hpp"
#include "runtime/spec/search_kind.hpp"
#include "runtime/spec/spec_choices.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_SUITE(spec_kinds)

BOOST_AUTO_TEST_CASE(every_search_kind_round_trips_through_its_name) {
  BOOST_TEST(search_names() == (std::vector<std::string>{"grid", "random", "asha", "hyperband", "pbt", "tpe"}),
             boost::test_tools::per_element());
  BOOST_TEST(search_kinds().size() == search_names().size());
  for (SearchKind kind : search_kinds()) {
    auto parsed = parse_search_kind(to_string(kind));
    BOOST_REQUIRE(parsed.has_value());
    BOOST_TEST(*parsed == kind);
  }
  BOOST_TEST(!parse_search_kind("Grid").has_value());
  BOOST_TEST(!parse_search_kind("").has_value());
  BOOST_TEST(!parse_search_kind("bohb").has_value());
}

BOOST_AUTO_TEST_CASE(every_scheduler_kind_round_trips_through_its_name) {
  for (const SchedulerInfo& info : scheduler_registry()) {
    BOOST_TEST(to_string(info.kind) == info.name);
    auto parsed = parse_scheduler_kind(info.name);
    BOOST_REQUIRE(parsed.has_value());
    BOOST_TEST(*parsed == info.kind);
    BOOST_TEST(!info.description.empty());
  }
  BOOST_TEST(!parse_scheduler_kind("fifo").has_value());
  BOOST_TEST(!parse_scheduler_kind("all").has_value());  // `simulate --policy all` is the command's word
}

BOOST_AUTO_TEST_CASE(the_spec_lists_the_default_scheduler_first_and_simulate_runs_registry_order) {
  BOOST_TEST(to_string(kDefaultScheduler) == "critical_path");
  BOOST_TEST(scheduler_names() == (std::vector<std::string>{"critical_path", "randomized"}),
             boost::test_tools::per_element());
  BOOST_TEST(policy_names() == (std::vector<std::string>{"randomized", "critical_path"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

#include "runtime/spec/steering.hpp"
#include "runtime/spec/steering_command.hpp"

BOOST_AUTO_TEST_SUITE(steering_commands_table)

BOOST_AUTO_TEST_CASE(every_steering_command_round_trips_through_its_name) {
  const std::vector<std::string> names = {"top",   "show",   "pause",   "resume", "stop",  "add",
                                          "clone", "export", "configs", "detail", "units", "file"};
  BOOST_REQUIRE(steering_commands().size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const SteeringCommandInfo& info = steering_commands()[i];
    BOOST_TEST(info.name == names[i]);
    BOOST_TEST(to_string(info.command) == names[i]);
    BOOST_TEST((parse_steering_command(names[i]) == info.command));
    BOOST_TEST(find_steering_command(info.command) == &info);
  }
  BOOST_TEST(!parse_steering_command("frobnicate").has_value());
  BOOST_TEST(!parse_steering_command("Pause").has_value());
  // A value outside the enum (a malformed request from a peer) has no entry.
  BOOST_TEST(find_steering_command(static_cast<SteeringCommand>(99)) == nullptr);
}

BOOST_AUTO_TEST_CASE(only_the_store_readers_are_answered_after_an_experiment_ends) {
  for (const auto& info : steering_commands()) {
    const bool reader = info.command == SteeringCommand::show || info.command == SteeringCommand::top ||
                        info.command == SteeringCommand::export_model || info.command == SteeringCommand::configs ||
                        info.command == SteeringCommand::detail || info.command == SteeringCommand::units ||
                        info.command == SteeringCommand::run_file;
    BOOST_TEST(info.reads_store == reader, info.name);
    // Repeatable commands have no side effect at all, so they read the store.
    if (info.repeatable) BOOST_TEST(info.reads_store, info.name);
    BOOST_TEST(info.usage.empty() == (info.target == SteeringTarget::none), info.name);
  }
}

BOOST_AUTO_TEST_CASE(a_user_action_record_names_its_command) {
  auto record = user_action(SteeringCommand::pause);
  BOOST_TEST(record.dump() == R"({"action":"pause","by":"user"})");
  BOOST_TEST(is_user_action(record));
}

BOOST_AUTO_TEST_SUITE_END()

#include "runtime/spec/metric.hpp"

BOOST_AUTO_TEST_SUITE(metric_kind)

BOOST_AUTO_TEST_CASE(both_metrics_round_trip_and_know_their_direction) {
  BOOST_TEST(metric_names() == (std::vector<std::string>{"val_accuracy", "val_loss", "val_macro_f1",
                                                         "val_top5_accuracy", "val_mse", "val_mae", "val_r2",
                                                         "val_subset_accuracy", "val_micro_f1", "val_token_accuracy",
                                                         "val_bleu4", "val_map50", "val_map", "val_perplexity"}),
             boost::test_tools::per_element());
  for (Metric metric : {Metric::val_accuracy, Metric::val_loss}) {
    BOOST_TEST((parse_metric(to_string(metric)) == metric));
  }
  BOOST_TEST(higher_is_better(Metric::val_accuracy));
  BOOST_TEST(!higher_is_better(Metric::val_loss));
  BOOST_TEST(!parse_metric("accuracy").has_value());
}

// Every task's metrics parse with their direction; a template's metric keeps the one recorded.
BOOST_AUTO_TEST_CASE(task_metrics_know_their_direction) {
  using cerebro::datasets::TaskKind;
  for (auto task : {TaskKind::classification, TaskKind::regression, TaskKind::multilabel, TaskKind::captioning,
                    TaskKind::detection, TaskKind::language_model}) {
    for (const auto& quantity : task_quantities(task))
      BOOST_TEST(parse_metric("val_" + quantity).has_value(), quantity);
    // A task ranks by one of its own quantities, never by one another task computes.
    const std::string quantity = default_metric(task).quantity();
    const auto& own = task_quantities(task);
    BOOST_TEST((std::find(own.begin(), own.end(), quantity) != own.end()), quantity);
  }
  BOOST_TEST(to_string(default_metric(TaskKind::captioning)) == "val_bleu4");
  BOOST_TEST(to_string(default_metric(TaskKind::detection)) == "val_map");
  BOOST_TEST(to_string(default_metric(TaskKind::language_model)) == "val_perplexity");
  BOOST_TEST(!parse_metric("val_perplexity")->higher_is_better());
  BOOST_TEST(parse_metric("val_bleu4")->higher_is_better());
  BOOST_TEST(parse_metric("val_map50")->test_name() == "test_map50");
  BOOST_TEST(parse_metric("val_r2")->higher_is_better());
  BOOST_TEST(!parse_metric("val_mse")->higher_is_better());
  BOOST_TEST(!parse_metric("val_mae")->higher_is_better());
  BOOST_TEST(parse_metric("val_micro_f1")->test_name() == "test_micro_f1");
  BOOST_TEST(to_string(default_metric(cerebro::datasets::TaskKind::regression)) == "val_r2");
  BOOST_TEST(!parse_metric("val_ndcg").has_value());
  BOOST_TEST(!metric_from_record("val_ndcg", "minimize").higher_is_better());
  BOOST_TEST(metric_from_record("val_ndcg", "maximize").higher_is_better());
  BOOST_TEST(!metric_from_record("val_mse", "maximize").higher_is_better());  // a built-in's own direction wins
}

BOOST_AUTO_TEST_SUITE_END()

#include <nlohmann/json.hpp>

#include "runtime/spec/param_value.hpp"

BOOST_AUTO_TEST_SUITE(distribution_kind)

BOOST_AUTO_TEST_CASE(every_distribution_round_trips_and_is_read_from_its_entry) {
  for (Distribution d :
       {Distribution::uniform, Distribution::loguniform, Distribution::int_uniform, Distribution::choice}) {
    BOOST_TEST((parse_distribution(to_string(d)) == d));
    BOOST_TEST((distribution_of(nlohmann::json{{"dist", to_string(d)}}) == d));
  }
  BOOST_TEST(!parse_distribution("normal").has_value());
  BOOST_TEST(!distribution_of(nlohmann::json::array({1, 2})).has_value());
  BOOST_TEST(!distribution_of(nlohmann::json{{"dist", 3}}).has_value());
}

BOOST_AUTO_TEST_CASE(the_data_and_pruner_choices_round_trip_through_their_names) {
  BOOST_TEST(image_color_names() == (std::vector<std::string>{"grayscale", "rgb"}), boost::test_tools::per_element());
  BOOST_TEST(augment_names() == (std::vector<std::string>{"random_crop", "hflip"}), boost::test_tools::per_element());
  BOOST_TEST(pruner_names() == (std::vector<std::string>{"asha", "hyperband"}), boost::test_tools::per_element());
  for (const auto& name : image_color_names()) BOOST_TEST(to_string(*parse_image_color(name)) == name);
  for (const auto& name : augment_names()) BOOST_TEST(to_string(*parse_augment(name)) == name);
  for (const auto& name : pruner_names()) BOOST_TEST(to_string(*parse_pruner(name)) == name);
  BOOST_TEST(to_string(Pruner::none) == "", "no pruner reads as a spec without the key");
  BOOST_TEST(!parse_pruner("").has_value());
  BOOST_TEST(!parse_image_color("RGB").has_value());
  BOOST_TEST(!parse_augment("vflip").has_value());
}

BOOST_AUTO_TEST_CASE(a_metric_knows_its_quantity_by_value) {
  BOOST_TEST((Metric::val_loss.kind() == Quantity::loss));
  BOOST_TEST((Metric::val_accuracy.kind() == Quantity::accuracy));
  BOOST_TEST((parse_metric("val_top5_accuracy")->kind() == Quantity::top5_accuracy));
  BOOST_TEST((Metric("ndcg", true).kind() == Quantity::custom));
  BOOST_TEST(!Metric("ndcg", true).builtin());
  BOOST_TEST((quantity_of_name("val_r2") == Quantity::r2));
  BOOST_TEST((quantity_of_name("test_r2") == Quantity::custom), "only validation names are metrics");
  BOOST_TEST((quantity_of_name("val_ndcg") == Quantity::custom));
  BOOST_TEST((quantity_named("micro_f1") == Quantity::micro_f1));
}

BOOST_AUTO_TEST_CASE(goals_round_trip_and_give_a_template_metric_its_direction) {
  BOOST_TEST(to_string(Goal::maximize) == "maximize");
  BOOST_TEST((parse_goal("minimize") == Goal::minimize));
  BOOST_TEST(!parse_goal("min").has_value());
  BOOST_TEST(!metric_from_record("val_ndcg", "minimize").higher_is_better());
  BOOST_TEST(metric_from_record("val_ndcg", "maximize").higher_is_better());
  BOOST_TEST(metric_from_record("val_ndcg").higher_is_better(), "no recorded goal ranks higher-is-better");
  BOOST_TEST(!metric_from_record("val_loss", "maximize").higher_is_better(), "a built-in keeps its own direction");
  BOOST_TEST(goal_of(Metric::val_loss) == "minimize");
}

BOOST_AUTO_TEST_SUITE_END()
