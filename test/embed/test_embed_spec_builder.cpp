// SpecBuilder: a built spec equals the parsed file it stands for, and a bad
// one fails with the parser's messages. experiment_result: the leaderboard
// order of summary.json.

#include <boost/test/unit_test.hpp>

#include "runtime/store/experiment_result.hpp"
#include "runtime/spec/spec_builder.hpp"

using namespace cerebro;
using nlohmann::json;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

BOOST_AUTO_TEST_SUITE(spec_builder)

BOOST_AUTO_TEST_CASE(built_spec_equals_the_file_it_stands_for) {
  auto built = SpecBuilder("churn")
                   .epochs(4)
                   .seed(7)
                   .metric("val_loss")
                   .data_source("csv")
                   .set("data", "train", "/data/churn.csv")
                   .set("data", "label_column", "churned")
                   .limit(500)
                   .partitions(3)
                   .validation_fraction(0.25)
                   .workers(2)
                   .space("model", {"mlp", "cnn"})
                   .space("lr", {1e-3, 1e-2})
                   .space("hidden", {json::array({64, 32})})
                   .build();
  BOOST_REQUIRE_MESSAGE(built.ok(), built.error());
  auto file = parse_spec_string(R"([experiment]
name = "churn"
epochs = 4
seed = 7
metric = "val_loss"
[data]
source = "csv"
train = "/data/churn.csv"
label_column = "churned"
limit = 500
partitions = 3
validation_fraction = 0.25
[cluster]
workers = 2
[space]
model = ["mlp", "cnn"]
lr = [1e-3, 1e-2]
hidden = [[64, 32]]
)",
                                "", "churn.toml");
  BOOST_REQUIRE_MESSAGE(file.ok(), file.error());
  BOOST_TEST(spec_to_json(*built).dump() == spec_to_json(*file).dump());
  // The stored text parses again to the same spec (what a replay does).
  auto again = parse_spec_string(built->source_text, "", "again.toml");
  BOOST_REQUIRE_MESSAGE(again.ok(), again.error());
  BOOST_TEST(spec_to_json(*again).dump() == spec_to_json(*built).dump());
}

BOOST_AUTO_TEST_CASE(distributions_and_other_sections_keys) {
  auto built = SpecBuilder("tune")
                   .search("random")
                   .samples(5)
                   .data_source("idx")
                   .set("data", "path", "/data/fashion")
                   .space("model", {"mlp"})
                   .space_value("lr", {{"dist", "loguniform"}, {"low", 1e-4}, {"high", 1e-1}})
                   .space_value("batch_size", 32)
                   .build();
  BOOST_REQUIRE_MESSAGE(built.ok(), built.error());
  BOOST_TEST(built->samples == 5);
  BOOST_TEST(built->space["lr"]["dist"] == "loguniform");
  BOOST_TEST(built->space["batch_size"] == json::array({32}));  // a scalar is a one-value list
  BOOST_TEST(built->data.path == "/data/fashion");
}

BOOST_AUTO_TEST_CASE(bad_values_fail_with_the_parsers_messages) {
  auto bad =
      SpecBuilder("bad").epochs(0).data_source("nowhere").set("cluster", "wrokers", 2).space("model", {"mlp"}).build();
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), "bad.toml:"), bad.error());
  BOOST_TEST(contains(bad.error(), "epochs"), bad.error());
  BOOST_TEST(contains(bad.error(), "got \"nowhere\""), bad.error());
  BOOST_TEST(contains(bad.error(), "unknown key 'wrokers' in [cluster]"), bad.error());
  auto no_space = SpecBuilder("empty").data_source("idx").set("data", "path", "/d").build();
  BOOST_TEST(contains(no_space.error(), "the search space is empty"), no_space.error());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(experiment_result_from_summary)

json summary_with(const std::string& metric, json configs) {
  return {{"metric", metric}, {"wall_s", 1.5}, {"configs", std::move(configs)}};
}

BOOST_AUTO_TEST_CASE(leaderboard_ranks_by_the_metric_unranked_last) {
  json configs = json::array({
      {{"id", 0}, {"params", {{"lr", 0.1}}}, {"status", "diverged"}, {"metric", nullptr}},
      {{"id", 1}, {"params", {{"lr", 0.01}}}, {"status", "completed"}, {"metric", 0.7}},
      {{"id", 2}, {"params", {{"lr", 0.001}}}, {"status", "completed"}, {"metric", 0.9}},
  });
  auto read = result_from_summary("e1", "/runs/e1", summary_with("val_accuracy", configs));
  BOOST_REQUIRE(read.ok());
  const experiment_result& r = *read;
  BOOST_TEST(r.ok());
  BOOST_TEST(r.wall_s == 1.5);
  BOOST_REQUIRE(r.leaderboard.size() == 3u);
  BOOST_TEST(r.leaderboard[0].config == 2);
  BOOST_TEST(r.leaderboard[0].metric == 0.9);
  BOOST_TEST(r.leaderboard[1].config == 1);
  BOOST_TEST(!r.leaderboard[2].validated);
  BOOST_TEST(json::parse(r.leaderboard[0].params_json) == json({{"lr", 0.001}}));
  BOOST_TEST(r.summary()["metric"] == "val_accuracy");
  auto table = format_leaderboard(r, 2);
  BOOST_TEST(contains(table, "0.9000"), table);
  BOOST_TEST(contains(table, "... 1 more"), table);

  auto by_loss = result_from_summary("e2", "/runs/e2", summary_with("val_loss", configs));
  BOOST_REQUIRE(by_loss.ok());
  BOOST_TEST(by_loss->leaderboard[0].config == 1);  // lower is better
}

BOOST_AUTO_TEST_CASE(a_summary_with_an_unknown_status_word_or_a_wrong_type_is_invalid) {
  json unknown = json::array({{{"id", 4}, {"status", "exploded"}, {"metric", 0.5}}});
  auto read = result_from_summary("e4", "/runs/e4", summary_with("val_accuracy", unknown));
  BOOST_TEST(read.status().is_invalid_argument());
  BOOST_TEST(contains(read.error(), "/runs/e4/summary.json: config 4"), read.error());
  BOOST_TEST(contains(read.error(), "exploded"), read.error());
  json wrong = {{"metric", 3}, {"configs", json::array()}};
  BOOST_TEST(result_from_summary("e5", "/runs/e5", wrong).status().is_invalid_argument());
}

BOOST_AUTO_TEST_CASE(failed_result_carries_the_error) {
  auto r = failed_result("e3", "/runs/e3", "the run directory already exists");
  BOOST_TEST(!r.ok());
  BOOST_TEST(r.summary().is_null());
  BOOST_TEST(r.leaderboard.empty());
}

BOOST_AUTO_TEST_SUITE_END()
