// Registered datasets in a spec (docs/SPEC.md "Registered datasets"): `[data] dataset = "NAME"` takes
// the registered keys, a key set twice or an unknown name is an error at its line, the run keeps the
// table it read; a table to register is checked as a [data] section and its paths made absolute.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "runtime/spec/spec.hpp"
#include "runtime/spec/spec_paths.hpp"
#include "test/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace cerebro;
using cerebro::testing::TempDir;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const json kRegistered = {
    {"sales", {{"source", "csv"}, {"train", "/data/sales/train.csv"}, {"label_column", "y"}}},
    {"fashion", {{"source", "idx"}, {"path", "/usr/share/datasets/fashion-mnist"}}},
};

std::string spec_with_data(const std::string& data) { return "[data]\n" + data + "[space]\nmodel = [\"mlp\"]\n"; }

}  // namespace

BOOST_AUTO_TEST_SUITE(registered_datasets)

BOOST_AUTO_TEST_CASE(a_spec_takes_the_keys_of_the_dataset_it_names_and_keeps_them) {
  auto spec = parse_spec_string(spec_with_data("dataset = \"sales\"\nlimit = 100\n"), "", "s.toml", {}, kRegistered);
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  BOOST_TEST(spec->data.source == "csv");
  BOOST_TEST(spec->data.train == "/data/sales/train.csv");
  BOOST_TEST(spec->data.label_column == "y");
  BOOST_TEST(spec->data.limit == 100);
  BOOST_TEST(spec->data.dataset == "sales");
  BOOST_TEST(spec->datasets == json({{"sales", kRegistered["sales"]}}));
  BOOST_TEST(spec_to_json(*spec)["datasets"] == spec->datasets);
  // Its paths are read like the spec's own: listed for the data-roots check.
  bool listed = false;
  for (const auto& p : spec_paths(*spec)) listed = listed || (p.key == "[data] train" && p.path == spec->data.train);
  BOOST_TEST(listed);
}

BOOST_AUTO_TEST_CASE(a_key_the_dataset_sets_may_not_be_set_again) {
  auto spec =
      parse_spec_string(spec_with_data("dataset = \"sales\"\nlabel_column = \"z\"\n"), "", "s.toml", {}, kRegistered);
  BOOST_REQUIRE(!spec.ok());
  BOOST_TEST(contains(spec.error(), "s.toml:3:16: [data] label_column is set by the registered dataset \"sales\""),
             spec.error());
}

BOOST_AUTO_TEST_CASE(an_unknown_dataset_names_the_registered_ones) {
  auto spec = parse_spec_string(spec_with_data("dataset = \"salse\"\n"), "", "s.toml", {}, kRegistered);
  BOOST_REQUIRE(!spec.ok());
  BOOST_TEST(contains(spec.error(), "s.toml:2:11: [data] dataset \"salse\" is not registered"), spec.error());
  BOOST_TEST(contains(spec.error(), "\"fashion\""), spec.error());
  BOOST_TEST(contains(spec.error(), "\"sales\""), spec.error());
  auto none = parse_spec_string(spec_with_data("dataset = \"sales\"\n"), "", "s.toml");
  BOOST_REQUIRE(!none.ok());
  BOOST_TEST(contains(none.error(), "none is: register one with POST /api/v1/datasets"), none.error());
}

BOOST_AUTO_TEST_CASE(a_table_to_register_is_checked_as_data_and_its_paths_made_absolute) {
  TempDir dir;
  std::ofstream(dir.file("train.csv")) << "x,y\n1,0\n";
  auto checked = check_dataset_table({{"source", "csv"}, {"train", "train.csv"}, {"label_column", "y"}},
                                     dir.path().string(), {}, "dataset \"mine\"");
  BOOST_REQUIRE_MESSAGE(checked.ok(), checked.error());
  BOOST_TEST(checked->table["train"] == (dir.path() / "train.csv").lexically_normal().string());
  BOOST_TEST(checked->table["label_column"] == "y");
  BOOST_TEST(checked->data.train == checked->table["train"].get<std::string>());

  auto missing = check_dataset_table({{"source", "csv"}}, dir.path().string(), {}, "dataset \"mine\"");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.error(), "dataset \"mine\": [data] train is required"), missing.error());
  auto unknown = check_dataset_table({{"source", "idx"}, {"pth", "x"}}, dir.path().string(), {}, "dataset \"mine\"");
  BOOST_REQUIRE(!unknown.ok());
  BOOST_TEST(contains(unknown.error(), "pth"), unknown.error());
  auto nested = check_dataset_table({{"dataset", "other"}}, dir.path().string(), {}, "dataset \"mine\"");
  BOOST_REQUIRE(!nested.ok());
  BOOST_TEST(contains(nested.error(), "cannot name another dataset"), nested.error());
  auto object = check_dataset_table({{"source", {{"a", 1}}}}, dir.path().string(), {}, "dataset \"mine\"");
  BOOST_REQUIRE(!object.ok());
  BOOST_TEST(contains(object.error(), "[data] source takes a string"), object.error());
}

BOOST_AUTO_TEST_CASE(a_dataset_name_is_a_plain_word) {
  BOOST_TEST(check_dataset_name("fashion-mnist_2.v1").ok());
  for (const std::string& bad : std::vector<std::string>{"", ".hidden", "a/b", "a b", std::string(65, 'x')})
    BOOST_TEST(!check_dataset_name(bad).ok(), bad);
}

BOOST_AUTO_TEST_CASE(an_uploaded_datasets_folder_may_be_read) {
  TempDir dir;
  fs::create_directories(dir.file("state/uploads/abc"));
  std::ofstream(dir.file("state/uploads/abc/train.csv")) << "x,y\n1,0\n";
  const json registered = {
      {"up", {{"source", "csv"}, {"train", dir.file("state/uploads/abc/train.csv")}, {"label_column", "y"}}}};
  auto spec = parse_spec_string(spec_with_data("dataset = \"up\"\n"), "", "s.toml", {}, registered);
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  AllowedPlaces allowed{{dir.file("roots")}, "", ""};
  BOOST_TEST(!check_spec_paths(*spec, allowed).ok());
  allowed.datasets = {dir.file("state/uploads/abc")};
  BOOST_TEST(check_spec_paths(*spec, allowed).ok());
}

BOOST_AUTO_TEST_SUITE_END()
