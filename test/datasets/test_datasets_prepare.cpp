// The ETL end to end: coverage of every example exactly once, split sizes, limit, determinism,
// normalization from train only, atomic output, and load_prepared's verification.

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "datasets/prepare.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;
namespace fs = std::filesystem;

namespace {

// Column "id" makes every example identifiable after shuffling; label = id % 3.
void write_id_csv(const std::string& path, int first, int n) {
  std::string text = "id,twice,label\n";
  for (int i = first; i < first + n; ++i)
    text += std::to_string(i) + "," + std::to_string(2 * i) + "," + std::to_string(i % 3) + "\n";
  write_text(path, text);
}

PrepareOptions id_csv_options(const std::string& csv) {
  PrepareOptions o;
  o.source = "csv";
  o.train_csv = csv;
  o.label_column = "label";
  o.partitions = 4;
  o.validation_fraction = 0.2;
  o.test_fraction = 0.1;
  o.normalization = NormalizationMode::none;
  return o;
}

// Ids of a shard, checking each row is consistent with its id.
std::vector<int64_t> ids_of(const Dataset& d) {
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < d.size(); ++r) {
    const auto id = static_cast<int64_t>(d.features[r * 2]);
    BOOST_TEST(d.features[r * 2 + 1] == float(2 * id));
    BOOST_TEST(d.labels[r] == id % 3);
    ids.push_back(id);
  }
  return ids;
}

void flip_byte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x01));
}

size_t entries_in(const fs::path& dir) { return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {})); }

}  // namespace

BOOST_AUTO_TEST_SUITE(prepare_etl)

BOOST_AUTO_TEST_CASE(partitions_cover_every_training_example_once) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 103);
  std::vector<std::string> lines;
  auto m = prepare(id_csv_options(dir.file("data.csv")), dir.file("out"),
                   [&](const std::string& line) { lines.push_back(line); });
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST(!lines.empty());
  // 103 -> test round(10.3) = 10 -> 93 -> validation round(18.6) = 19 -> 74 training in 4 partitions.
  BOOST_TEST(m->train_examples == 74);
  BOOST_TEST(m->validation.count == 19);
  BOOST_TEST(m->test.count == 10);
  BOOST_TEST(m->num_classes == 3);
  BOOST_TEST(m->sample_shape == (std::vector<int64_t>{2}), boost::test_tools::per_element());
  BOOST_TEST(m->inputs == (std::vector<std::string>{dir.file("data.csv")}), boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(m->partitions.size() == 4u);
  int64_t smallest = m->partitions[0].count, largest = smallest;
  for (const auto& p : m->partitions) {
    smallest = std::min(smallest, p.count);
    largest = std::max(largest, p.count);
  }
  BOOST_TEST(largest - smallest <= 1);
  BOOST_TEST(m->partitions[0].file == "part-0000.bin");
  BOOST_TEST(m->partitions[3].file == "part-0003.bin");

  auto data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  std::multiset<int64_t> train_ids, all_ids;
  for (size_t p = 0; p < data->partitions.size(); ++p) {
    BOOST_TEST(data->partitions[p]->size() == m->partitions[p].count);
    for (int64_t id : ids_of(*data->partitions[p])) train_ids.insert(id);
  }
  BOOST_TEST(train_ids.size() == 74u);
  all_ids = train_ids;
  for (int64_t id : ids_of(*data->validation)) {
    BOOST_TEST(train_ids.count(id) == 0u);  // validation is disjoint from training
    all_ids.insert(id);
  }
  for (int64_t id : ids_of(*data->test)) {
    BOOST_TEST(train_ids.count(id) == 0u);
    all_ids.insert(id);
  }
  // Every example of the file lands in exactly one place.
  BOOST_TEST(all_ids.size() == 103u);
  BOOST_TEST(std::set<int64_t>(all_ids.begin(), all_ids.end()).size() == 103u);
  BOOST_TEST(*all_ids.begin() == 0);
  BOOST_TEST(*all_ids.rbegin() == 102);
}

BOOST_AUTO_TEST_CASE(limit_keeps_the_first_examples) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 100);
  auto o = id_csv_options(dir.file("data.csv"));
  o.limit = 30;
  o.test_fraction = 0.0;
  o.validation_fraction = 0.1;
  o.partitions = 2;
  auto m = prepare(o, dir.file("out"));
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST(m->train_examples == 27);
  BOOST_TEST(m->validation.count == 3);
  BOOST_TEST(m->test.count == 0);
  auto data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  std::set<int64_t> ids;
  for (const auto& p : data->partitions)
    for (int64_t id : ids_of(*p)) ids.insert(id);
  for (int64_t id : ids_of(*data->validation)) ids.insert(id);
  BOOST_TEST(ids.size() == 30u);
  BOOST_TEST(*ids.rbegin() == 29);
}

BOOST_AUTO_TEST_CASE(same_seed_same_shards_other_seed_other_shuffle) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 50);
  auto o = id_csv_options(dir.file("data.csv"));
  auto a = prepare(o, dir.file("a"));
  auto b = prepare(o, dir.file("b"));
  o.seed = 43;
  auto c = prepare(o, dir.file("c"));
  BOOST_TEST_REQUIRE((a.ok() && b.ok() && c.ok()));
  BOOST_TEST(a->partitions[0].checksum == b->partitions[0].checksum);
  BOOST_TEST(a->test.checksum == b->test.checksum);
  BOOST_TEST(a->partitions[0].checksum != c->partitions[0].checksum);
}

BOOST_AUTO_TEST_CASE(idx_source_with_global_normalization) {
  TempDir dir;
  write_gz(dir.file("train-img.gz"), idx_images_bytes(40, 2, 2), true);
  write_gz(dir.file("train-lab.gz"), idx_labels_bytes(40), true);
  write_gz(dir.file("test-img"), idx_images_bytes(12, 2, 2), false);
  write_gz(dir.file("test-lab"), idx_labels_bytes(12), false);
  PrepareOptions o;
  o.source = "idx";
  o.train_images = dir.file("train-img.gz");
  o.train_labels = dir.file("train-lab.gz");
  o.test_images = dir.file("test-img");
  o.test_labels = dir.file("test-lab");
  o.partitions = 3;
  o.validation_fraction = 0.25;
  auto m = prepare(o, dir.file("out"));
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST(m->source == "idx");
  BOOST_TEST(m->inputs.size() == 4u);
  BOOST_TEST(m->num_classes == 10);
  BOOST_TEST(m->train_examples == 30);
  BOOST_TEST(m->test.count == 12);
  BOOST_TEST(m->normalization_mode == "global");
  BOOST_TEST(m->sample_shape == (std::vector<int64_t>{1, 2, 2}), boost::test_tools::per_element());

  auto data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  // The statistics are the training part's own: normalized training data has mean 0 and stddev 1 (statistics
  // that also saw the validation examples miss this by ~0.09 on this data).
  double sum = 0, squares = 0, count = 0;
  for (const auto& p : data->partitions) {
    for (float x : p->features) {
      sum += x;
      squares += double(x) * x;
      ++count;
    }
  }
  BOOST_TEST(sum / count == 0.0, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(std::sqrt(squares / count) == 1.0, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(string_labels_share_classes_between_train_and_test) {
  TempDir dir;
  write_text(dir.file("train.csv"), "x,animal\n0,dog\n1,cat\n2,dog\n3,cat\n");
  write_text(dir.file("test.csv"), "x,animal\n10,bird\n11,cat\n");
  PrepareOptions o;
  o.source = "csv";
  o.train_csv = dir.file("train.csv");
  o.test_csv = dir.file("test.csv");
  o.label_column = "animal";
  o.validation_fraction = 0;
  o.normalization = NormalizationMode::none;
  auto m = prepare(o, dir.file("out"));
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST(m->class_names == (std::vector<std::string>{"bird", "cat", "dog"}), boost::test_tools::per_element());
  BOOST_TEST(m->num_classes == 3);
  auto data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  const Dataset& train = *data->partitions[0];
  for (int64_t r = 0; r < train.size(); ++r) {
    BOOST_TEST(train.labels[r] == (int(train.features[r]) % 2 == 0 ? 2 : 1));  // even x: dog
  }
  const Dataset& test = *data->test;
  for (int64_t r = 0; r < test.size(); ++r) BOOST_TEST(test.labels[r] == (test.features[r] == 10.0f ? 0 : 1));
}

BOOST_AUTO_TEST_CASE(option_errors_leave_no_out_dir) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 10);
  auto expect_error = [&](PrepareOptions o, const std::string& part) {
    auto m = prepare(o, dir.file("out"));
    BOOST_TEST_REQUIRE(!m.ok());
    BOOST_TEST(contains(m.error(), part), m.error());
    BOOST_TEST(!fs::exists(dir.file("out")));
  };
  auto o = id_csv_options(dir.file("data.csv"));
  o.partitions = 8;  // 10 -> 9 -> 7 training examples
  expect_error(o, "8 partitions is more than the 7 training examples");
  o = id_csv_options(dir.file("data.csv"));
  o.validation_fraction = 1.0;
  expect_error(o, "validation_fraction 1 is outside [0, 1)");
  o.validation_fraction = -0.1;
  expect_error(o, "validation_fraction -0.1 is outside [0, 1)");
  o = id_csv_options(dir.file("data.csv"));
  o.test_fraction = 1.5;
  expect_error(o, "test_fraction 1.5");
  o = id_csv_options(dir.file("data.csv"));
  o.partitions = 0;
  expect_error(o, "partitions 0");
  o = id_csv_options(dir.file("missing.csv"));
  expect_error(o, dir.file("missing.csv"));
  o = id_csv_options(dir.file("data.csv"));
  o.label_column = "class";
  expect_error(o, "label column 'class' not found");
  o = id_csv_options(dir.file("data.csv"));
  o.source = "parquet";
  expect_error(o, "source 'parquet'");
  write_text(dir.file("big-label.csv"), "x,label\n1,0\n2,5000000\n3,1\n");
  o = id_csv_options(dir.file("big-label.csv"));
  o.partitions = 1;
  expect_error(o, "label 5000000 is out of range");
  BOOST_TEST(entries_in(dir.path()) == 2u);  // the two CSV files; no temporary directories left behind
}

BOOST_AUTO_TEST_CASE(out_dir_must_be_new_or_empty) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 20);
  fs::create_directory(dir.file("full"));
  write_text(dir.file("full/keep.txt"), "mine");
  auto m = prepare(id_csv_options(dir.file("data.csv")), dir.file("full"));
  BOOST_TEST_REQUIRE(!m.ok());
  BOOST_TEST(contains(m.error(), "full: output directory exists and is not empty"), m.error());
  BOOST_TEST(entries_in(dir.file("full")) == 1u);

  fs::create_directory(dir.file("empty"));
  m = prepare(id_csv_options(dir.file("data.csv")), dir.file("empty") + "/");
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST(fs::exists(dir.file("empty/manifest.json")));
}

BOOST_AUTO_TEST_CASE(failure_while_writing_leaves_nothing) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 40);
  int shards_written = 0;
  auto throwing_progress = [&](const std::string& line) {
    if (line.rfind("wrote part-", 0) == 0 && ++shards_written == 2) throw std::runtime_error("interrupted");
  };
  BOOST_CHECK_THROW(prepare(id_csv_options(dir.file("data.csv")), dir.file("nested/out"), throwing_progress),
                    std::runtime_error);
  BOOST_TEST(shards_written == 2);
  BOOST_TEST(!fs::exists(dir.file("nested/out")));
  BOOST_TEST(entries_in(dir.file("nested")) == 0u);  // the temporary sibling directory is gone too
}

BOOST_AUTO_TEST_CASE(load_prepared_verifies_every_checksum) {
  TempDir dir;
  write_id_csv(dir.file("data.csv"), 0, 60);
  auto m = prepare(id_csv_options(dir.file("data.csv")), dir.file("out"));
  BOOST_TEST_REQUIRE(m.ok(), m.error());
  BOOST_TEST_REQUIRE(load_prepared(dir.file("out")).ok());

  flip_byte(dir.file("out/part-0002.bin"), m->partitions[2].bytes - 3);
  auto data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "part-0002.bin: checksum"), data.error());
  BOOST_TEST(contains(data.error(), "does not match the manifest's " + m->partitions[2].checksum), data.error());

  flip_byte(dir.file("out/part-0002.bin"), m->partitions[2].bytes - 3);  // restore
  BOOST_TEST_REQUIRE(load_prepared(dir.file("out")).ok());
  fs::remove(dir.file("out/test.bin"));
  data = load_prepared(dir.file("out"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "test.bin"), data.error());
}

BOOST_AUTO_TEST_SUITE_END()
