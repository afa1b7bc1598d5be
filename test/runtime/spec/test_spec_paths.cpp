// The files a spec makes a coordinator read, and the check data roots make of them (docs/CLUSTER.md,
// "Data roots"): every path key is found, a path under a root or among the brought files passes, any
// other (also through "..", a symbolic link, or an annotations file relative to `path`) is refused with
// the key and the path named; a relative path missing where the spec is falls back to the roots.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "runtime/spec/spec.hpp"
#include "runtime/spec/spec_paths.hpp"
#include "test/support/temp_dir.hpp"

namespace fs = std::filesystem;
using cerebro::allowed_places;
using cerebro::AllowedPlaces;
using cerebro::check_spec_paths;
using cerebro::parse_spec_string;
using cerebro::path_base;
using cerebro::path_is_under;
using cerebro::spec_paths;
using cerebro::testing::TempDir;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string csv_spec(const std::string& train) {
  return "[data]\nsource = \"csv\"\ntrain = \"" + train + "\"\nlabel_column = \"y\"\n[space]\nmodel = [\"mlp\"]\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spec_paths_and_data_roots)

BOOST_AUTO_TEST_CASE(every_path_key_of_a_spec_is_listed) {
  TempDir dir;
  const std::string text =
      "[experiment]\nsearch = \"random\"\nsamples = 2\nwarm_start = [\"runs/a\"]\n[data]\nsource = \"idx\"\npath = "
      "\"fashion\"\n"
      "[space]\nmodel = [\"net.pt\", \"cnn\"]\nlr = [0.1]\n";
  auto spec = parse_spec_string(text, dir.path(), "paths.toml");
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  std::vector<std::string> keys, paths;
  for (const auto& p : spec_paths(*spec)) {
    keys.push_back(p.key);
    paths.push_back(p.path);
  }
  const std::vector<std::string> expected_keys = {"[data] path", "[space] model", "[experiment] warm_start"};
  BOOST_TEST(keys == expected_keys, boost::test_tools::per_element());
  BOOST_TEST(paths[0] == (fs::path(dir.path()) / "fashion").string());
  BOOST_TEST(paths[1] == (fs::path(dir.path()) / "net.pt").string());  // "cnn" is a zoo model, no file
  BOOST_TEST(paths[2] == (fs::path(dir.path()) / "runs" / "a").string());
}

BOOST_AUTO_TEST_CASE(a_path_is_under_a_root_only_after_dots_and_links_are_resolved) {
  TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "root" / "data");
  fs::create_directories(fs::path(dir.path()) / "elsewhere");
  const std::string root = (fs::path(dir.path()) / "root").string();
  BOOST_TEST(path_is_under(root + "/data/train.csv", root));
  BOOST_TEST(path_is_under(root, root));
  BOOST_TEST(path_is_under(root + "/not/yet/there.csv", root));
  BOOST_TEST(!path_is_under(root + "/../elsewhere/x.csv", root));
  BOOST_TEST(!path_is_under(root + "-other/x.csv", root));  // a sibling that shares the name's start
  fs::create_directory_symlink(fs::path(dir.path()) / "elsewhere", fs::path(root) / "link");
  BOOST_TEST(!path_is_under(root + "/link/x.csv", root));
}

BOOST_AUTO_TEST_CASE(a_path_outside_the_roots_is_refused_naming_key_and_path) {
  TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "root");
  const std::string root = (fs::path(dir.path()) / "root").string();
  auto spec = parse_spec_string(csv_spec("/etc/passwd"), dir.path(), "outside.toml");
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  auto refused = check_spec_paths(*spec, AllowedPlaces{{root}, "", ""});
  BOOST_TEST(refused.is_permission_denied());
  BOOST_TEST(contains(refused.message(), "[data] train = \"/etc/passwd\" is outside the data roots"),
             refused.message());
  BOOST_TEST(contains(refused.message(), root), refused.message());
  BOOST_TEST(!contains(refused.message(), "root:x:0"), refused.message());

  auto inside = parse_spec_string(csv_spec(root + "/train.csv"), dir.path(), "inside.toml");
  BOOST_REQUIRE(inside.ok());
  BOOST_TEST(check_spec_paths(*inside, AllowedPlaces{{root}, "", ""}).ok());
  auto escaping = parse_spec_string(csv_spec(root + "/../train.csv"), dir.path(), "escaping.toml");
  BOOST_REQUIRE(escaping.ok());
  BOOST_TEST(check_spec_paths(*escaping, AllowedPlaces{{root}, "", ""}).is_permission_denied());
}

BOOST_AUTO_TEST_CASE(annotations_may_not_climb_out_of_the_data_path) {
  TempDir dir;
  const std::string root = (fs::path(dir.path()) / "root").string();
  fs::create_directories(fs::path(root) / "coco");
  const std::string text = "[experiment]\ntask = \"captioning\"\n[data]\nsource = \"coco\"\npath = \"" + root +
                           "/coco\"\nannotations = \"../../secrets.json\"\n[space]\nmodel = [\"captioner\"]\n";
  auto spec = parse_spec_string(text, dir.path(), "climb.toml");
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  const auto listed = spec_paths(*spec);
  BOOST_REQUIRE(listed.size() == 2u);
  BOOST_TEST(listed[1].key == "[data] annotations");
  auto refused = check_spec_paths(*spec, AllowedPlaces{{root}, "", ""});
  BOOST_TEST(refused.is_permission_denied());
  BOOST_TEST(contains(refused.message(), "[data] annotations"), refused.message());
}

BOOST_AUTO_TEST_CASE(brought_files_and_the_coordinators_runs_are_allowed_where_they_belong) {
  TempDir dir;
  const std::string brought = (fs::path(dir.path()) / "uploads" / "abc").string();
  const std::string runs = (fs::path(dir.path()) / "experiments").string();
  fs::create_directories(brought);
  auto spec = parse_spec_string(csv_spec("train.csv"), brought, "brought.toml");
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(check_spec_paths(*spec, AllowedPlaces{{}, brought, runs}).ok());
  // A run directory is no data: warm_start alone may read the coordinator's runs.
  auto data_in_runs = parse_spec_string(csv_spec(runs + "/e1/train.csv"), brought, "runs.toml");
  BOOST_REQUIRE(data_in_runs.ok());
  BOOST_TEST(check_spec_paths(*data_in_runs, AllowedPlaces{{}, brought, runs}).is_permission_denied());
  auto warm = parse_spec_string(
      "[experiment]\nsearch = \"random\"\nsamples = 2\nwarm_start = [\"" + runs + "/e1\"]\n" + csv_spec("train.csv"),
      brought, "warm.toml");
  BOOST_REQUIRE_MESSAGE(warm.ok(), warm.error());
  BOOST_TEST(check_spec_paths(*warm, AllowedPlaces{{}, brought, runs}).ok());
}

BOOST_AUTO_TEST_CASE(a_relative_path_missing_where_the_spec_is_falls_back_to_the_roots_in_order) {
  TempDir dir;
  const auto spec_dir = fs::path(dir.path()) / "brought";
  const auto first = fs::path(dir.path()) / "first", second = fs::path(dir.path()) / "second";
  for (const auto& d : {spec_dir, first, second}) fs::create_directories(d / "sub");
  dir.write("second/sub/train.csv", "x,y\n1,0\n");
  auto spec = parse_spec_string(csv_spec("sub/train.csv"), spec_dir.string(), "fallback.toml",
                                {first.string(), second.string()});
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->data.train == (second / "sub" / "train.csv").string());
  BOOST_TEST(spec->search_dirs == (std::vector<std::string>{first.string(), second.string()}));

  // A file the spec's own folder holds (what a submission brought) comes first.
  dir.write("brought/sub/train.csv", "x,y\n1,0\n");
  dir.write("first/sub/train.csv", "x,y\n1,0\n");
  spec = parse_spec_string(csv_spec("sub/train.csv"), spec_dir.string(), "fallback.toml",
                           {first.string(), second.string()});
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->data.train == (spec_dir / "sub" / "train.csv").string());

  // Found nowhere: the path where the spec is, so the error names what the spec meant.
  spec = parse_spec_string(csv_spec("nowhere.csv"), spec_dir.string(), "fallback.toml", {first.string()});
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->data.train == (spec_dir / "nowhere.csv").string());
}

// Only one folder of the uploads counts as brought files (the HTTP server names it as the spec's folder):
// not the uploads folder itself, nor a folder elsewhere.
BOOST_AUTO_TEST_CASE(the_places_of_a_submission_follow_the_coordinators_state) {
  TempDir dir;
  const std::string state = (fs::path(dir.path()) / "state").string();
  const std::string upload = state + "/uploads/k3y";
  auto brought = allowed_places({"/srv/data"}, state, upload);
  BOOST_TEST(brought.roots == (std::vector<std::string>{"/srv/data"}));
  BOOST_TEST(brought.brought == upload);
  BOOST_TEST(brought.runs == state + "/experiments");
  BOOST_TEST(allowed_places({"/srv/data"}, state, state + "/uploads").brought.empty());
  BOOST_TEST(allowed_places({"/srv/data"}, state, "/home/someone").brought.empty());
  BOOST_TEST(allowed_places({"/srv/data"}, state, "").brought.empty());
}

// Relative paths start from the brought files, from a spec folder under a root, or else from the first root;
// without roots, from the spec's folder as always.
BOOST_AUTO_TEST_CASE(relative_paths_start_from_a_place_the_submission_may_read) {
  const AllowedPlaces none{{}, "", ""};
  BOOST_TEST(path_base(none, "/home/someone") == "/home/someone");
  const AllowedPlaces roots{{"/srv/a", "/srv/b"}, "", ""};
  BOOST_TEST(path_base(roots, "/srv/b/specs") == "/srv/b/specs");
  BOOST_TEST(path_base(roots, "/home/someone") == "/srv/a");
  BOOST_TEST(path_base(roots, "") == "/srv/a");
  const AllowedPlaces with_files{{"/srv/a"}, "/state/uploads/k3y", ""};
  BOOST_TEST(path_base(with_files, "/state/uploads/k3y") == "/state/uploads/k3y");
}

BOOST_AUTO_TEST_SUITE_END()
