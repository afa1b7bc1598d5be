// Every way a spec can be wrong gets a message naming the key and its place.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "datasets/normalization.hpp"
#include "datasets/tokenizer.hpp"
#include "runtime/spec/spec.hpp"

namespace fs = std::filesystem;
using cerebro::parse_spec_string;

namespace {

const std::string kData = "[data]\nsource = \"idx\"\npath = \"/d\"\n";
const std::string kSpace = "[space]\nmodel = [\"mlp\"]\n";

// The error message of a spec that must fail to parse.
std::string error_of(const std::string& toml) {
  auto result = parse_spec_string(toml, "/specs", "fashion.toml");
  BOOST_REQUIRE_MESSAGE(!result.ok(), "expected a parse error for:\n" + toml);
  BOOST_TEST(result.status().is_invalid_argument(), "a bad spec is invalid_argument: " << result.error());
  return result.error();
}

void expect_error(const std::string& toml, std::initializer_list<std::string> parts) {
  const std::string message = error_of(toml);
  for (const auto& part : parts) {
    BOOST_TEST(message.find(part) != std::string::npos,
               "message \"" << message << "\" should contain \"" << part << "\"");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spec_errors)

BOOST_AUTO_TEST_CASE(unknown_keys_name_the_key_section_and_line) {
  expect_error("# comment\n[experiment]\nepochs = 3\nseed = 1\n\n\nlrr = 0.1\n" + kData + kSpace,
               {"fashion.toml:7:1: unknown key 'lrr' in [experiment]"});
  expect_error("[data]\nsource = \"idx\"\npath = \"/d\"\nsorce = \"idx\"\n" + kSpace,
               {"fashion.toml:4:1: unknown key 'sorce' in [data]"});
  expect_error(kData + "[cluster]\nworkers = 2\nwrokers = 3\n" + kSpace,
               {"fashion.toml:6:1: unknown key 'wrokers' in [cluster]"});
  expect_error("epochs = 3\n" + kData + kSpace, {"fashion.toml:1:1: unknown key 'epochs' at the top level"});
  // A near miss is named; otherwise the known keys are listed.
  expect_error("[experiment]\nserch = \"random\"\n" + kData + kSpace,
               {"fashion.toml:2:1: unknown key 'serch' in [experiment] (did you mean 'search'?)"});
  expect_error(kData + "[cluster]\ncores = 2\n" + kSpace,
               {"unknown key 'cores' in [cluster] (known: 'workers', 'threads_per_worker'"});
}

BOOST_AUTO_TEST_CASE(unknown_sections_are_named) {
  expect_error(kData + kSpace + "\n[trainer]\nx = 1\n", {"fashion.toml:7:1: unknown section [trainer]"});
  expect_error("[expriment]\nepochs = 2\n" + kData + kSpace,
               {"fashion.toml:1:1: unknown section [expriment] (did you mean [experiment]?)"});
  expect_error("experiment = 3\n" + kData + kSpace,
               {"fashion.toml:1:1: 'experiment' must be a section [experiment], got integer 3"});
}

BOOST_AUTO_TEST_CASE(wrong_types_name_the_expected_type_and_the_value) {
  expect_error("[experiment]\nname = \"x\"\nepochs = \"3\"\n" + kData + kSpace,
               {"fashion.toml:3:10: [experiment] epochs must be an integer >= 1, got string \"3\""});
  expect_error("[experiment]\nepochs = 3.0\n" + kData + kSpace,
               {"fashion.toml:2:10: [experiment] epochs must be an integer >= 1, got float 3.0"});
  expect_error("[experiment]\nepochs = 0\n" + kData + kSpace, {"epochs must be an integer >= 1, got integer 0"});
  expect_error("[experiment]\nseed = -1\n" + kData + kSpace, {":2:8:", "seed must be an integer >= 0"});
  expect_error("[experiment]\nname = 5\n" + kData + kSpace,
               {":2:8:", "[experiment] name must be a string, got integer 5"});
  expect_error(kData + "[cluster]\nworkers = 2.5\n" + kSpace, {":5:11:", "[cluster] workers must be an integer"});
  expect_error(kData + "[cluster]\nthreads_per_worker = 0\n" + kSpace, {"threads_per_worker must be an integer >= 1"});
  expect_error(kData + "partitions = true\n" + kSpace,
               {":4:14:", "[data] partitions must be an integer >= 0, got boolean true"});
  expect_error(kData + "limit = -5\n" + kSpace, {"[data] limit must be an integer >= 0"});
  expect_error(kData + "validation_fraction = 1\n" + kSpace,
               {":4:23:", "validation_fraction must be a number in [0, 1), got integer 1"});
  expect_error(kData + "validation_fraction = \"0.1\"\n" + kSpace, {"validation_fraction must be a number"});
  expect_error("[experiment]\nepochs = 99999999999\n" + kData + kSpace, {"epochs must be an integer <= 2147483647"});
}

BOOST_AUTO_TEST_CASE(enumerated_values_list_the_accepted_ones) {
  expect_error(
      "[experiment]\nsearch = \"grd\"\n" + kData + kSpace,
      {":2:10:",
       "[experiment] search must be \"grid\", \"random\", \"asha\", \"hyperband\", \"pbt\" or \"tpe\", got \"grd\""});
  expect_error("[experiment]\nmetric = \"accuracy\"\n" + kData + kSpace, {"metric must be", "\"val_loss\""});
  expect_error(kData + "normalization = \"zscore\"\n" + kSpace, {"[data] normalization must be", "\"per_feature\""});
  expect_error(kData + "[cluster]\nscheduler = \"fifo\"\n" + kSpace,
               {"[cluster] scheduler must be \"critical_path\" or \"randomized\""});
  expect_error("[data]\nsource = \"parquet\"\n" + kSpace,
               {":2:10:", "[data] source must be \"idx\", \"csv\", \"images\", \"coco\" or \"text\""});
  expect_error("[experiment]\nname = \"a/b\"\n" + kData + kSpace, {"name must not contain '/'"});
}

BOOST_AUTO_TEST_CASE(missing_required_keys_are_named) {
  expect_error(kSpace, {"the [data] section is missing"});
  expect_error("[data]\npath = \"/d\"\n" + kSpace, {"fashion.toml:1:1: [data] source is required"});
  expect_error("[data]\nsource = \"idx\"\n" + kSpace,
               {"fashion.toml:1:1: [data] path is required", "or all four of train_images"});
  expect_error("[data]\nsource = \"idx\"\ntrain_images = \"a\"\ntrain_labels = \"b\"\ntest_images = \"c\"\n" + kSpace,
               {"[data] test_labels is required: give all four IDX files"});
  expect_error(kData + "train_images = \"a\"\n" + kSpace, {"[data] path and the explicit files"});
  expect_error("[data]\nsource = \"csv\"\nlabel_column = \"y\"\n" + kSpace, {"[data] train is required"});
  expect_error("[data]\nsource = \"csv\"\ntrain = \"t.csv\"\n" + kSpace, {"[data] label_column is required"});
  expect_error("[data]\nsource = \"csv\"\ntrain = \"t.csv\"\nlabel_column = \"y\"\npath = \"/d\"\n" + kSpace,
               {":5:8:", "[data] path applies only to source = \"idx\""});
  expect_error(kData + "label_column = \"y\"\n" + kSpace, {"[data] label_column applies only to source = \"csv\""});
  expect_error(
      "[data]\nsource = \"csv\"\ntrain = \"t.csv\"\ntest = \"u.csv\"\nlabel_column = \"y\"\ntest_fraction = 0.2\n" +
          kSpace,
      {":6:17:", "test_fraction applies only when no test file is given"});
  expect_error("[data]\nsource = \"csv\"\ntrain = \"t.csv\"\nlabel_column = \"y\"\ntest_fraction = 0\n" + kSpace,
               {":5:17:", "test_fraction must be a number in (0, 1), got integer 0"});
  expect_error("[experiment]\nsearch = \"random\"\n" + kData + kSpace,
               {"fashion.toml:1:1: [experiment] samples is required", "e.g. samples = 8"});
  expect_error("[experiment]\nsamples = 4\n" + kData + kSpace,
               {":2:11:", "samples applies only to search = \"random\""});
  expect_error("[experiment]\nsearch = \"random\"\nsamples = 0\n" + kData + kSpace,
               {"samples must be an integer >= 1"});
  expect_error("[data]\nsource = \"csv\"\ntrain = \"\"\nlabel_column = \"y\"\n" + kSpace,
               {":3:9:", "[data] train must not be empty"});
}

BOOST_AUTO_TEST_CASE(image_data_keys_are_checked_and_belong_to_their_sources) {
  const std::string images = "[data]\nsource = \"images\"\npath = \"/img\"\n";
  auto ok = parse_spec_string(images +
                                  "image_size = [32, 24]\ncolor = \"rgb\"\nresize = false\nskip_bad = true\n"
                                  "augment = [\"hflip\", \"random_crop\"]\ncrop_padding = 2\ncache = false\n" +
                                  kSpace,
                              "/specs", "i.toml");
  BOOST_REQUIRE_MESSAGE(ok.ok(), ok.error());
  BOOST_TEST(ok->data.image_size == (std::vector<int64_t>{32, 24}), boost::test_tools::per_element());
  BOOST_TEST((ok->data.color == cerebro::ImageColor::rgb));
  BOOST_TEST(!ok->data.resize);
  BOOST_TEST(ok->data.skip_bad);
  BOOST_TEST(ok->data.augment.size() == 2u);
  BOOST_TEST(ok->data.crop_padding == 2);
  BOOST_TEST(!ok->data.cache);
  BOOST_TEST((cerebro::effective_normalization(ok->data) == cerebro::datasets::NormalizationMode::global));
  auto square = parse_spec_string(images + "image_size = 28\n" + kSpace, "/specs", "i.toml");
  BOOST_TEST(square->data.image_size == (std::vector<int64_t>{28, 28}), boost::test_tools::per_element());
  expect_error("[data]\nsource = \"images\"\n" + kSpace, {"[data] path is required: give path = a folder"});
  expect_error(images + "image_size = [0, 3]\n" + kSpace, {"[data] image_size must be an integer or [height, width]"});
  expect_error(images + "augment = [\"rotate\"]\n" + kSpace,
               {"[data] augment holds \"rotate\": each entry must be \"random_crop\" or \"hflip\""});
  expect_error(images + "crop_padding = 3\n" + kSpace,
               {"[data] crop_padding applies only with augment = [\"random_crop\""});
  expect_error(kData + "image_size = 28\n" + kSpace, {"[data] image_size applies only to source = \"images\""});
  expect_error(images + "label_column = \"y\"\n" + kSpace, {"[data] label_column applies only to source = \"csv\""});
  expect_error("[data]\nsource = \"csv\"\ntrain = \"t.csv\"\nlabel_column = \"y\"\naugment = [\"hflip\"]\n" + kSpace,
               {"[data] augment applies only to source = \"idx\" or \"images\""});
  expect_error(kData + "[cluster]\nmemory_mb = -1\n" + kSpace, {"[cluster] memory_mb must be an integer >= 0"});
  expect_error(kData + "[cluster]\nmodel_memory_mb = -1\n" + kSpace,
               {"[cluster] model_memory_mb must be an integer >= 0"});
}

BOOST_AUTO_TEST_CASE(structured_data_keys_are_checked_and_go_with_their_tasks) {
  const std::string coco = "[experiment]\ntask = \"detection\"\n[data]\nsource = \"coco\"\npath = \"shapes\"\n";
  const std::string text = "[experiment]\ntask = \"language_model\"\n[data]\nsource = \"text\"\npath = \"t.txt\"\n";
  auto ok = parse_spec_string(coco + "annotations = \"instances.json\"\nimage_root = \"images\"\n" + kSpace, "/specs",
                              "c.toml");
  BOOST_REQUIRE_MESSAGE(ok.ok(), ok.error());
  BOOST_TEST(ok->data.annotations == "instances.json");
  BOOST_TEST(ok->data.image_root == "images");
  BOOST_TEST(ok->data.path == "/specs/shapes");
  auto lm =
      parse_spec_string(text + "window = 16\ntokenizer = \"bytes\"\nmax_vocab = 50\n" + kSpace, "/specs", "t.toml");
  BOOST_REQUIRE_MESSAGE(lm.ok(), lm.error());
  BOOST_TEST(lm->data.window == 16);
  BOOST_TEST((lm->data.tokenizer == cerebro::datasets::TokenizerKind::bytes));
  BOOST_TEST(lm->data.max_vocab == 50);
  BOOST_TEST((cerebro::effective_normalization(lm->data) == cerebro::datasets::NormalizationMode::none));

  expect_error(coco + kSpace, {"[data] annotations is required"});
  expect_error(text + kSpace, {"[data] window is required"});
  expect_error(text + "window = 1\n" + kSpace, {"[data] window must be an integer >= 2"});
  expect_error(text + "window = 8\ntokenizer = \"bpe\"\n" + kSpace,
               {"[data] tokenizer must be \"words\" or \"bytes\""});
  expect_error(text + "window = 8\nannotations = \"a.json\"\n" + kSpace,
               {"[data] annotations applies only to source = \"coco\""});
  expect_error(kData + "window = 8\n" + kSpace, {"[data] window applies only to source = \"text\""});
  expect_error("[data]\nsource = \"coco\"\npath = \"s\"\nannotations = \"c.json\"\n" + kSpace,
               {"coco holds captions or boxes; set [experiment] task = \"captioning\" or \"detection\""});
  expect_error("[experiment]\ntask = \"language_model\"\n" + kData + kSpace,
               {"task language_model needs source = \"text\""});

  // A captioning run decodes greedily unless [experiment] beam asks for a beam search.
  const std::string captions = "[data]\nsource = \"coco\"\npath = \"s\"\nannotations = \"c.json\"\n";
  auto greedy = parse_spec_string("[experiment]\ntask = \"captioning\"\n" + captions + kSpace, "/specs", "c.toml");
  BOOST_REQUIRE_MESSAGE(greedy.ok(), greedy.error());
  BOOST_TEST(greedy->beam == 1);
  auto beamed =
      parse_spec_string("[experiment]\ntask = \"captioning\"\nbeam = 4\n" + captions + kSpace, "/specs", "c.toml");
  BOOST_REQUIRE_MESSAGE(beamed.ok(), beamed.error());
  BOOST_TEST(beamed->beam == 4);
  BOOST_TEST(cerebro::spec_to_json(*beamed)["beam"] == 4);
  expect_error("[experiment]\ntask = \"captioning\"\nbeam = 0\n" + captions + kSpace,
               {"[experiment] beam must be an integer >= 1"});
  expect_error("[experiment]\nbeam = 2\n" + kData + kSpace,
               {"[experiment] beam decodes captions: it needs task = \"captioning\" (the task is classification)"});
}

// [data] read_ahead, off by default, turned on by the spec (a
// mapped partition's batches gathered on a background thread).
BOOST_AUTO_TEST_CASE(read_ahead_is_a_data_key_off_by_default) {
  auto off = parse_spec_string(kData + kSpace, "/specs", "r.toml");
  BOOST_REQUIRE_MESSAGE(off.ok(), off.error());
  BOOST_TEST(!off->data.read_ahead);
  auto on = parse_spec_string(kData + "read_ahead = true\n" + kSpace, "/specs", "r.toml");
  BOOST_REQUIRE_MESSAGE(on.ok(), on.error());
  BOOST_TEST(on->data.read_ahead);
  BOOST_TEST(cerebro::spec_to_json(*on)["data"]["read_ahead"] == true);
  expect_error(kData + "read_ahead = \"yes\"\n" + kSpace,
               {"[data] read_ahead must be true or false, got string \"yes\""});
  expect_error(kData + "read_ahead = 1\n" + kSpace, {"[data] read_ahead must be true or false, got integer 1"});
  expect_error(kData + "read_ahaed = true\n" + kSpace, {"read_ahead"});  // the suggestion names the key
}

BOOST_AUTO_TEST_CASE(search_space_errors) {
  expect_error(kData + "[space]\nmodel = [\"mlp\"]\nlr = []\n",
               {"fashion.toml:6:6: [space] lr is an empty list: give at least one value"});
  expect_error(kData, {"the search space is empty"});
  expect_error(kData + "[space]\n", {"fashion.toml:4:1: the search space is empty"});
  expect_error(kData + "[space]\nlr = { dist = \"uniform\", low = 0.001, high = 0.1 }\n",
               {"fashion.toml:5:6: [space] lr is a distribution", "search = \"random\"", "list of values"});
  expect_error(kData + "[space]\nlr = { low = 1, high = 2 }\n", {":5:6:", "[space] lr is a table without 'dist'"});
  expect_error(kData + "[space]\nlr = [nan]\n", {":5:7:", "[space] lr must hold finite numbers, got float nan"});
  expect_error(kData + "[space]\nwhen = 1979-05-27\n", {":5:8:", "[space] when: dates and times are not supported"});
  expect_error("space = 3\n" + kData, {"fashion.toml:1:1: 'space' must be a section [space], got integer 3"});
}

BOOST_AUTO_TEST_CASE(bad_distributions_under_random_search) {
  const std::string head = "[experiment]\nsearch = \"random\"\nsamples = 3\n" + kData + "[space]\n";
  // The [space] entries start on line 8.
  expect_error(head + "lr = { dist = \"gaussian\", low = 0, high = 1 }\n",
               {"fashion.toml:8:6: [space] lr has an unknown dist \"gaussian\""});
  expect_error(head + "lr = { dist = \"uniform\", low = 0.1, high = 0.1 }\n", {":8:6:", "[space] lr needs low < high"});
  expect_error(head + "lr = { dist = \"uniform\", low = 0.1 }\n", {"[space] lr needs 'high' for dist = \"uniform\""});
  expect_error(head + "lr = { dist = \"uniform\", low = 0.1, high = 1, step = 2 }\n",
               {"[space] lr has an unknown field 'step'"});
  expect_error(head + "lr = { dist = \"uniform\", low = \"a\", high = 1 }\n",
               {"uniform bounds must be finite numbers, got string \"a\""});
  expect_error(head + "lr = { dist = \"loguniform\", low = 0, high = 1 }\n", {"[space] lr loguniform needs low > 0"});
  expect_error(head + "units = { dist = \"int_uniform\", low = 1.0, high = 5 }\n",
               {"[space] units int_uniform bounds must be integers, got float 1.0"});
  expect_error(head + "units = { dist = \"int_uniform\", low = 5, high = 1 }\n", {"[space] units needs low <= high"});
  expect_error(head + "opt = { dist = \"choice\", values = [] }\n", {"[space] opt has an empty choice list"});
  expect_error(head + "opt = { dist = \"choice\", values = \"adam\" }\n", {"[space] opt choice values must be a list"});
  expect_error(head + "opt = { dist = 3 }\n", {"[space] opt dist must be a string"});
}

BOOST_AUTO_TEST_CASE(syntax_errors_give_the_line) {
  expect_error("[experiment]\nepochs = 3\nseed = [1,\n" + kData + kSpace, {"fashion.toml:4:", "TOML syntax error"});
  expect_error("[experiment]\nepochs = 3\nepochs = 4\n" + kData + kSpace,
               {"fashion.toml:3:", "TOML syntax error", "epochs"});
}

BOOST_AUTO_TEST_CASE(several_problems_are_reported_in_file_order) {
  const std::string message =
      error_of("[experiment]\nepochs = \"x\"\nlrr = 1\n[data]\nsource = \"idx\"\npath = \"/d\"\nfoo = 2\n" + kSpace);
  const auto first = message.find("fashion.toml:2:10:");
  const auto second = message.find("fashion.toml:3:1: unknown key 'lrr'");
  const auto third = message.find("fashion.toml:7:1: unknown key 'foo' in [data]");
  BOOST_TEST(first != std::string::npos);
  BOOST_TEST(second != std::string::npos);
  BOOST_TEST(third != std::string::npos);
  BOOST_TEST((first < second && second < third), message);
}

BOOST_AUTO_TEST_CASE(missing_or_unreadable_files) {
  const fs::path missing = fs::temp_directory_path() / "cerebro-spec-does-not-exist" / "nope.toml";
  auto result = cerebro::parse_spec_file(missing.string());
  BOOST_REQUIRE(!result.ok());
  BOOST_TEST(result.error() == missing.string() + ": spec file not found");

  auto dir = cerebro::parse_spec_file(fs::temp_directory_path().string());
  BOOST_REQUIRE(!dir.ok());
  BOOST_TEST(dir.error().find("is a directory") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
