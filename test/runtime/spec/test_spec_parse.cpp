#define BOOST_TEST_MODULE spec
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "datasets/normalization.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"
#include "test/support/temp_dir.hpp"

namespace fs = std::filesystem;
using cerebro::ExperimentSpec;
using cerebro::parse_spec_file;
using cerebro::parse_spec_string;
using cerebro::SchedulerKind;
using cerebro::SearchKind;
using cerebro::datasets::NormalizationMode;
using nlohmann::json;

namespace {

// A test directory whose write() returns a path.
struct TempDir : cerebro::testing::TempDir {
  fs::path write(const std::string& name, const std::string& text) const {
    return fs::path(cerebro::testing::TempDir::write(name, text));
  }
};

const char* kFullSpec = R"(
[experiment]
name = "full"
epochs = 7
seed = 1234
search = "random"
samples = 5
metric = "val_loss"

[data]
source = "csv"
train = "data/train.csv"
test = "../shared/test.csv"
label_column = "species"
validation_fraction = 0.25
partitions = 4
limit = 1000
normalization = "none"

[cluster]
workers = 3
threads_per_worker = 2
max_unit_retries = 5
scheduler = "randomized"

[space]
model = ["mlp", "nets/custom.pt"]
lr = { dist = "loguniform", low = 1e-4, high = 1e-1 }
batch_size = [32, 64]
hidden = [[256, 128], [512]]
nesterov = true
dropout = { dist = "uniform", low = 0, high = 0.5 }
channels = { dist = "int_uniform", low = 8, high = 32 }
optimizer = { dist = "choice", values = ["adam", "sgd"] }
)";

}  // namespace

BOOST_AUTO_TEST_CASE(full_spec_parses_every_field) {
  auto result = parse_spec_string(kFullSpec, "/experiments/iris", "full.toml");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  const ExperimentSpec& spec = *result;
  BOOST_TEST(spec.name == "full");
  BOOST_TEST(spec.epochs == 7);
  BOOST_TEST(spec.seed == 1234u);
  BOOST_TEST(spec.search == SearchKind::random);
  BOOST_TEST(spec.samples == 5);
  BOOST_TEST(spec.metric == cerebro::Metric::val_loss);
  BOOST_TEST(spec.data.source == "csv");
  BOOST_TEST(spec.data.train == "/experiments/iris/data/train.csv");
  BOOST_TEST(spec.data.test == "/experiments/shared/test.csv");
  BOOST_TEST(spec.data.label_column == "species");
  BOOST_TEST(spec.data.validation_fraction == 0.25);
  BOOST_TEST(spec.data.partitions == 4);
  BOOST_TEST(spec.data.limit == 1000);
  BOOST_TEST((spec.data.normalization == NormalizationMode::none));
  BOOST_TEST(spec.cluster.workers == 3);
  BOOST_TEST(spec.cluster.threads_per_worker == 2);
  BOOST_TEST(spec.cluster.max_unit_retries == 5);
  BOOST_TEST(spec.cluster.scheduler == SchedulerKind::randomized);
  BOOST_TEST(spec.spec_dir == "/experiments/iris");
  BOOST_TEST(spec.source_text == kFullSpec);

  const json& space = spec.space;
  BOOST_TEST(space.size() == 8u);
  BOOST_TEST(space["model"] == json({"mlp", "/experiments/iris/nets/custom.pt"}));
  BOOST_TEST(space["batch_size"] == json({32, 64}));
  BOOST_TEST(space["batch_size"][0].is_number_integer());
  BOOST_TEST(space["hidden"] == json::parse("[[256,128],[512]]"));
  BOOST_TEST(space["nesterov"] == json::array({true}));  // a scalar is a one-element list
  BOOST_TEST(space["lr"]["dist"] == "loguniform");
  BOOST_TEST(space["lr"]["low"].get<double>() == 1e-4);
  BOOST_TEST(space["dropout"]["low"].is_number_float());  // uniform bounds become floats
  BOOST_TEST(space["channels"]["low"].is_number_integer());
  BOOST_TEST(space["optimizer"]["values"] == json({"adam", "sgd"}));
}

BOOST_AUTO_TEST_CASE(defaults_apply_to_a_minimal_spec) {
  auto result =
      parse_spec_string("[data]\nsource = \"idx\"\npath = \"/d\"\n[space]\nmodel = \"mlp\"\n", "", "minimal.toml");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  const ExperimentSpec& spec = *result;
  BOOST_TEST(spec.name == "minimal");  // the origin's stem
  BOOST_TEST(spec.epochs == 3);
  BOOST_TEST(spec.seed == 42u);
  BOOST_TEST(spec.search == SearchKind::grid);
  BOOST_TEST(spec.samples == 0);
  BOOST_TEST(spec.metric == cerebro::Metric::val_accuracy);
  BOOST_TEST(spec.data.validation_fraction == 0.1);
  BOOST_TEST(spec.data.test_fraction == 0.1);
  BOOST_TEST(spec.data.partitions == 0);
  BOOST_TEST(spec.data.limit == 0);
  BOOST_TEST(!spec.data.normalization.has_value(), "auto leaves the mode to the source");
  BOOST_TEST((cerebro::effective_normalization(spec.data) == NormalizationMode::global));
  BOOST_TEST(spec.cluster.workers == 0);
  BOOST_TEST(spec.cluster.threads_per_worker == 1);
  BOOST_TEST(spec.cluster.max_unit_retries == 3);
  BOOST_TEST(spec.cluster.scheduler == SchedulerKind::critical_path);
  BOOST_TEST(spec.spec_dir == "");
  BOOST_TEST(spec.space == json::parse(R"({"model": ["mlp"]})"));
  BOOST_TEST(cerebro::higher_is_better(spec.metric));
  BOOST_TEST(!cerebro::metric_higher_is_better("val_loss"));

  auto unnamed =
      parse_spec_string("[data]\nsource = \"idx\"\npath = \"/d\"\n[space]\nmodel = \"mlp\"\n", "", "<string>");
  BOOST_REQUIRE(unnamed.ok());
  BOOST_TEST(unnamed->name == "experiment");
}

BOOST_AUTO_TEST_CASE(integer_values_are_accepted_for_float_keys) {
  auto result = parse_spec_string(
      "[data]\nsource = \"csv\"\ntrain = \"t.csv\"\nlabel_column = \"y\"\nvalidation_fraction = 0\n"
      "[space]\nlr = [1, 0.5]\n",
      "/s", "f.toml");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  BOOST_TEST(result->data.validation_fraction == 0.0);
  BOOST_TEST(result->space["lr"][0].is_number_integer());  // list values keep their TOML type
  BOOST_TEST((cerebro::effective_normalization(result->data) == NormalizationMode::per_feature));
}

BOOST_AUTO_TEST_CASE(relative_data_paths_resolve_against_the_spec_directory) {
  TempDir dir;
  fs::path file = dir.write("specs/mnist.toml",
                            "[data]\nsource = \"idx\"\ntrain_images = \"../data/./a-images\"\n"
                            "train_labels = \"b\"\ntest_images = \"/abs/dir/../c\"\ntest_labels = \"sub/d\"\n"
                            "[space]\nmodel = [\"mlp\", \"../models/net.pt\", \"/abs/m.pt\"]\n");
  auto result = parse_spec_file(file.string());
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  const fs::path specs = fs::absolute(dir.path() / "specs").lexically_normal();
  BOOST_TEST(result->spec_dir == specs.string());
  BOOST_TEST(result->name == "mnist");
  BOOST_TEST(result->data.train_images == (dir.path() / "data/a-images").lexically_normal().string());
  BOOST_TEST(result->data.train_labels == (specs / "b").string());
  BOOST_TEST(result->data.test_images == "/abs/c");
  BOOST_TEST(result->data.test_labels == (specs / "sub/d").string());
  BOOST_TEST(result->source_text.find("train_images") != std::string::npos);
  const json& models = result->space["model"];
  BOOST_TEST(models[0] == "mlp");  // a zoo name is not a path
  BOOST_TEST(models[1] == (dir.path() / "models/net.pt").lexically_normal().string());
  BOOST_TEST(models[2] == "/abs/m.pt");
}

BOOST_AUTO_TEST_CASE(pt_models_resolve_as_scalars_and_in_choice_distributions) {
  auto scalar =
      parse_spec_string("[data]\nsource=\"idx\"\npath=\"d/\"\n[space]\nmodel = \"m/x.pt\"\n", "/root/exp", "a.toml");
  BOOST_REQUIRE_MESSAGE(scalar.ok(), scalar.error());
  BOOST_TEST(scalar->space["model"] == json::array({"/root/exp/m/x.pt"}));
  BOOST_TEST(scalar->data.path == "/root/exp/d");  // trailing separator dropped

  auto choice = parse_spec_string(
      "[experiment]\nsearch=\"random\"\nsamples=2\n[data]\nsource=\"idx\"\npath=\"/d\"\n"
      "[space]\nmodel = { dist = \"choice\", values = [\"cnn\", \"y.pt\"] }\n",
      "/root/exp", "a.toml");
  BOOST_REQUIRE_MESSAGE(choice.ok(), choice.error());
  BOOST_TEST(choice->space["model"]["values"] == json({"cnn", "/root/exp/y.pt"}));
}

BOOST_AUTO_TEST_CASE(spec_to_json_round_trips_the_main_fields) {
  auto result = parse_spec_string(kFullSpec, "/experiments/iris", "full.toml");
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
  const json j = cerebro::spec_to_json(*result);
  BOOST_TEST(j["name"] == "full");
  BOOST_TEST(j["epochs"] == 7);
  BOOST_TEST(j["seed"] == 1234);
  BOOST_TEST(j["search"] == "random");
  BOOST_TEST(j["samples"] == 5);
  BOOST_TEST(j["metric"] == "val_loss");
  BOOST_TEST(j["spec_dir"] == "/experiments/iris");
  BOOST_TEST(j["data"]["source"] == "csv");
  BOOST_TEST(j["data"]["train"] == "/experiments/iris/data/train.csv");
  BOOST_TEST(j["data"]["label_column"] == "species");
  BOOST_TEST(j["data"]["validation_fraction"] == 0.25);
  BOOST_TEST(j["data"]["partitions"] == 4);
  BOOST_TEST(j["data"]["limit"] == 1000);
  BOOST_TEST(j["data"]["normalization"] == "none");
  BOOST_TEST(j["cluster"]["workers"] == 3);
  BOOST_TEST(j["cluster"]["threads_per_worker"] == 2);
  BOOST_TEST(j["cluster"]["max_unit_retries"] == 5);
  BOOST_TEST(j["cluster"]["scheduler"] == "randomized");
  BOOST_TEST(j["space"] == result->space);
  BOOST_TEST(!j.contains("source_text"));
  // The stored TOML text rebuilds the same spec, and the JSON survives a dump.
  auto again = parse_spec_string(result->source_text, j["spec_dir"].get<std::string>(), "full.toml");
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(cerebro::spec_to_json(*again) == j);
  BOOST_TEST(json::parse(j.dump()) == j);
}

BOOST_AUTO_TEST_CASE(example_specs_parse) {
  const fs::path examples = fs::path(CEREBRO_SOURCE_DIR) / "examples";
  auto fashion = parse_spec_file((examples / "fashion_mnist.toml").string());
  BOOST_REQUIRE_MESSAGE(fashion.ok(), fashion.error());
  BOOST_TEST(fashion->name == "fashion_mnist");
  BOOST_TEST(fashion->epochs == 3);
  BOOST_TEST(fashion->seed == 42u);
  BOOST_TEST(fashion->data.source == "idx");
  BOOST_TEST(fashion->data.path == "/usr/share/datasets/fashion-mnist");
  BOOST_TEST(fashion->data.validation_fraction == 0.1);
  auto configs = cerebro::configs_for(*fashion);
  BOOST_REQUIRE_MESSAGE(configs.ok(), configs.error());
  BOOST_TEST(configs->size() == 8u);

  auto csv = parse_spec_file((examples / "csv_example.toml").string());
  BOOST_REQUIRE_MESSAGE(csv.ok(), csv.error());
  BOOST_TEST(csv->data.source == "csv");
  BOOST_TEST(csv->data.label_column == "species");
  BOOST_TEST(csv->space["model"] == json::array({"mlp"}));
  BOOST_TEST(fs::exists(csv->data.train));  // the example's CSV ships with it
  BOOST_TEST(fs::file_size(csv->data.train) <= 10u * 1024u);
  BOOST_TEST(cerebro::configs_for(*csv).ok());
}

// [experiment] task with several regression targets; a template's metric needs metric_goal; a metric
// or label list the task does not have is an error at its key.
BOOST_AUTO_TEST_CASE(tasks_label_columns_and_template_metrics) {
  const std::string data = "[data]\nsource = \"csv\"\ntrain = \"t.csv\"\n";
  auto regression = parse_spec_string(
      "[experiment]\ntask = \"regression\"\n" + data + "label_column = [\"y1\", \"y2\"]\n[space]\nmodel = [\"mlp\"]\n",
      "/d", "r.toml");
  BOOST_REQUIRE_MESSAGE(regression.ok(), regression.error());
  BOOST_TEST((regression->task == cerebro::datasets::TaskKind::regression));
  BOOST_TEST(regression->data.label_columns == (std::vector<std::string>{"y1", "y2"}),
             boost::test_tools::per_element());
  BOOST_TEST(to_string(regression->metric) == "val_r2");  // the task's default

  auto custom = parse_spec_string("[experiment]\nmetric = \"val_ndcg\"\nmetric_goal = \"maximize\"\n" + data +
                                      "label_column = \"y\"\n[space]\nmodel = [\"m.pt\"]\n",
                                  "/d", "c.toml");
  BOOST_REQUIRE_MESSAGE(custom.ok(), custom.error());
  BOOST_TEST(to_string(custom->metric) == "val_ndcg");
  BOOST_TEST(custom->metric.higher_is_better());
  BOOST_TEST(!custom->metric.builtin());

  auto no_goal = parse_spec_string(
      "[experiment]\nmetric = \"val_ndcg\"\n" + data + "label_column = \"y\"\n[space]\nmodel = [\"mlp\"]\n", "/d",
      "g.toml");
  BOOST_REQUIRE(!no_goal.ok());
  BOOST_TEST(no_goal.error().find("g.toml:2:10: [experiment] metric must be") != std::string::npos, no_goal.error());
  BOOST_TEST(no_goal.error().find("metric_goal") != std::string::npos);

  auto lists = parse_spec_string("[experiment]\ntask = \"multilabel\"\nmetric = \"val_r2\"\n" + data +
                                     "label_column = [\"a\", \"b\"]\n[space]\nmodel = [\"mlp\"]\n",
                                 "/d", "l.toml");
  BOOST_REQUIRE(!lists.ok());
  BOOST_TEST(lists.error().find("\"val_r2\" is not computed for task multilabel") != std::string::npos, lists.error());
  BOOST_TEST(lists.error().find("several target columns are for task = \"regression\"") != std::string::npos);
}
