// The prepared-data cache (datasets/prepared_cache.hpp): prepared once, found again intact without a
// second preparation or copy, a changed file or parameter gets its own entry, a damaged entry is detected
// by its checksums and prepared again, and list/prune see and remove entries.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "datasets/prepared_cache.hpp"
#include "test/datasets/test_datasets_util.hpp"

namespace cerebro::datasets {
namespace {

using testing::contains;
using testing::TempDir;
namespace fs = std::filesystem;

std::string table(int rows, int shift = 0) {
  std::string text = "a,b,label\n";
  for (int i = 0; i < rows; ++i)
    text += std::to_string(i + shift) + "," + std::to_string(i % 7) + "," + std::to_string(i % 3) + "\n";
  return text;
}

PrepareOptions csv_options(const std::string& train) {
  PrepareOptions o;
  o.source = "csv";
  o.train_csv = train;
  o.label_column = "label";
  o.partitions = 2;
  o.normalization = NormalizationMode::per_feature;
  return o;
}

void flip_byte(const std::string& path, int64_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(at);
  f.write(&c, 1);
}

BOOST_AUTO_TEST_CASE(prepared_once_then_found_a_changed_file_or_parameter_prepares_its_own_entry) {
  TempDir dir;
  const std::string train = dir.write("train.csv", table(40));
  PreparedCache cache(dir.file("cache"));
  auto first = cache.find_or_prepare(csv_options(train));
  BOOST_REQUIRE_MESSAGE(first.ok(), first.status().message());
  BOOST_TEST(first->prepared);
  BOOST_TEST(fs::exists(fs::path(first->dir) / "part-0001.bin"));
  BOOST_TEST(fs::exists(fs::path(first->dir) / kCacheKeyFileName));

  std::vector<std::string> lines;
  auto second = cache.find_or_prepare(csv_options(train), [&](const std::string& l) { lines.push_back(l); });
  BOOST_REQUIRE(second.ok());
  BOOST_TEST(!second->prepared);
  BOOST_TEST(second->dir == first->dir);
  BOOST_TEST(lines.size() == 1u);
  BOOST_TEST(contains(lines.at(0), "found in the cache"));
  // The same file elsewhere is the same content: the same entry.
  fs::copy_file(train, dir.file("copy.csv"));
  BOOST_TEST(cache.find_or_prepare(csv_options(dir.file("copy.csv")))->dir == first->dir);

  auto seed = csv_options(train);
  seed.seed = 7;
  auto reseeded = cache.find_or_prepare(seed);
  BOOST_REQUIRE(reseeded.ok());
  BOOST_TEST(reseeded->prepared);
  BOOST_TEST(reseeded->dir != first->dir);
  auto partitions = csv_options(train);
  partitions.partitions = 3;
  BOOST_TEST(cache.find_or_prepare(partitions)->prepared);
  dir.write("train.csv", table(40, 1));  // the same size, other content
  auto edited = cache.find_or_prepare(csv_options(train));
  BOOST_REQUIRE(edited.ok());
  BOOST_TEST(edited->prepared);
  BOOST_TEST(edited->dir != first->dir);

  auto entries = cache.list();
  BOOST_REQUIRE(entries.ok());
  BOOST_TEST(entries->size() == 4u);
  BOOST_TEST(entries->at(0).problem.empty());
  BOOST_TEST(entries->at(0).source == "csv");
  // Nothing but the entries: no temporaries left behind.
  int others = 0;
  for (const auto& e : fs::directory_iterator(dir.file("cache"))) others += e.path().filename().string()[0] == '.';
  BOOST_TEST(others == 0);
}

// The task and the label columns decide what the shards hold (class labels or float targets, and which
// columns): each gets its own entry, and the entry's manifest is for that task.
BOOST_AUTO_TEST_CASE(the_task_and_the_label_columns_are_part_of_the_key) {
  TempDir dir;
  const std::string train = dir.write("train.csv", table(40));
  PreparedCache cache(dir.file("cache"));
  auto classes = cache.find_or_prepare(csv_options(train));
  BOOST_REQUIRE_MESSAGE(classes.ok(), classes.status().message());
  auto regression = csv_options(train);
  regression.task = TaskKind::regression;
  auto targets = cache.find_or_prepare(regression);
  BOOST_REQUIRE_MESSAGE(targets.ok(), targets.status().message());
  BOOST_TEST(targets->prepared);
  BOOST_TEST(targets->dir != classes->dir);
  BOOST_TEST((targets->manifest.task == TaskKind::regression));
  auto two = regression;
  two.label_columns = {"label", "b"};
  auto two_targets = cache.find_or_prepare(two);
  BOOST_REQUIRE_MESSAGE(two_targets.ok(), two_targets.status().message());
  BOOST_TEST(two_targets->prepared);
  BOOST_TEST(two_targets->dir != targets->dir);
  BOOST_TEST(two_targets->manifest.num_classes == 2);  // two targets per example
  // Found again by the same task and columns.
  BOOST_TEST(!cache.find_or_prepare(regression)->prepared);
}

BOOST_AUTO_TEST_CASE(a_damaged_entry_is_detected_by_its_checksums_and_prepared_again) {
  TempDir dir;
  const std::string train = dir.write("train.csv", table(30));
  PreparedCache cache(dir.file("cache"));
  auto first = cache.find_or_prepare(csv_options(train));
  BOOST_REQUIRE(first.ok());
  flip_byte((fs::path(first->dir) / "part-0000.bin").string(), 60);
  std::vector<std::string> lines;
  auto repaired = cache.find_or_prepare(csv_options(train), [&](const std::string& l) { lines.push_back(l); });
  BOOST_REQUIRE_MESSAGE(repaired.ok(), repaired.status().message());
  BOOST_TEST(repaired->prepared);
  BOOST_TEST(repaired->repaired);
  BOOST_TEST(repaired->dir == first->dir);
  BOOST_TEST(contains(lines.at(0), "is damaged (" + first->dir + "/part-0000.bin: checksum"), lines.at(0));
  BOOST_TEST(verify_prepared(repaired->dir).ok());
  // A missing shard is damage too.
  fs::remove(fs::path(first->dir) / "test.bin");
  BOOST_TEST(cache.find_or_prepare(csv_options(train))->repaired);
}

BOOST_AUTO_TEST_CASE(prune_removes_named_stale_and_unreadable_entries_and_leftovers) {
  TempDir dir;
  PreparedCache cache(dir.file("cache"));
  auto a = cache.find_or_prepare(csv_options(dir.write("a.csv", table(20))));
  auto b = cache.find_or_prepare(csv_options(dir.write("b.csv", table(21))));
  BOOST_REQUIRE(a.ok() && b.ok());
  fs::create_directories(dir.file("cache/.tmp-0123-999999999-0/entry"));  // a preparation whose process is gone
  fs::create_directories(dir.file("cache/broken"));                       // no manifest
  auto listed = cache.list();
  BOOST_REQUIRE(listed.ok());
  BOOST_TEST(listed->size() == 3u);
  auto removed = cache.prune(PruneRule{false, -1, {a->name}});
  BOOST_REQUIRE(removed.ok());
  BOOST_TEST(removed->size() == 2u);  // a, and the unreadable one
  BOOST_TEST(!fs::exists(a->dir));
  BOOST_TEST(fs::exists(b->dir));
  BOOST_TEST(!fs::exists(dir.file("cache/.tmp-0123-999999999-0")));
  BOOST_TEST(cache.prune(PruneRule{false, -1, {"nosuch"}}).status().is_not_found());
  BOOST_TEST(cache.prune(PruneRule{false, 3600, {}})->empty());  // b was used just now
  BOOST_TEST(cache.prune(PruneRule{true, -1, {}})->size() == 1u);
  BOOST_TEST(cache.list()->empty());
}

}  // namespace
}  // namespace cerebro::datasets
