// Structured examples: ragged fields through gather, the ETL's row slices and version 3 shards (in memory and
// mapped), and a damaged field tail rejected with a message naming the shard.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "datasets/shard.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;
namespace fs = std::filesystem;

namespace {

// Three images of 1x2x2 with boxes (1, 0 and 2 of them), their classes, captions and ids; no labels.
Dataset boxed_images() {
  Dataset d;
  d.sample_shape = {1, 2, 2};
  for (int i = 0; i < 12; ++i) d.features.push_back(static_cast<float>(i) / 4.0f);
  RaggedField ids{"image_id", FieldType::int64};
  RaggedField boxes{"boxes", FieldType::float32, 4};
  RaggedField classes{"box_labels", FieldType::int64};
  RaggedField captions{"captions_text", FieldType::text};
  const std::vector<float> box_values = {1, 2, 3, 4, 0.5f, 0.25f, 8, 9, 10, 11, 12, 13};
  ids.append_ints(std::vector<int64_t>{7}.data(), 1);
  ids.append_ints(std::vector<int64_t>{3}.data(), 1);
  ids.append_ints(std::vector<int64_t>{99}.data(), 1);
  boxes.append_floats(box_values.data(), 1);
  boxes.append_floats(nullptr, 0);
  boxes.append_floats(box_values.data() + 4, 2);
  classes.append_ints(std::vector<int64_t>{2}.data(), 1);
  classes.append_ints(nullptr, 0);
  classes.append_ints(std::vector<int64_t>{0, 1}.data(), 2);
  captions.append_texts({"a square", "one shape"});
  captions.append_texts({"nothing at all"});
  captions.append_texts({"two", "shapes", ""});
  d.fields = {ids, boxes, classes, captions};
  return d;
}

void check_same_fields(const Dataset& a, const Dataset& b) {
  BOOST_TEST_REQUIRE(a.fields.size() == b.fields.size());
  for (size_t k = 0; k < a.fields.size(); ++k) {
    const RaggedField &x = a.fields[k], &y = b.fields[k];
    BOOST_TEST(x.name == y.name);
    BOOST_TEST((x.type == y.type));
    BOOST_TEST(x.width == y.width);
    BOOST_TEST(x.offsets == y.offsets, boost::test_tools::per_element());
    BOOST_TEST(x.ints == y.ints, boost::test_tools::per_element());
    BOOST_TEST(x.floats == y.floats, boost::test_tools::per_element());
    BOOST_TEST(x.texts == y.texts, boost::test_tools::per_element());
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fields)

BOOST_AUTO_TEST_CASE(a_dataset_without_labels_counts_its_examples_by_its_fields) {
  const Dataset d = boxed_images();
  BOOST_TEST(d.size() == 3);
  BOOST_TEST(d.field("boxes")->items() == 3);
  BOOST_TEST(d.field("boxes")->items_of(1) == 0);
  BOOST_TEST(d.field("captions_text")->items_of(2) == 3);
  BOOST_TEST(d.field("no such field") == nullptr);
}

BOOST_AUTO_TEST_CASE(gather_keeps_each_examples_items_with_it) {
  const Dataset d = boxed_images();
  const Dataset g = gather(d, {2, 0, 1}, 0, 2);  // examples 2 then 0
  BOOST_TEST(g.size() == 2);
  BOOST_TEST(g.labels.empty());
  BOOST_TEST(g.field("image_id")->ints == (std::vector<int64_t>{99, 7}), boost::test_tools::per_element());
  BOOST_TEST(g.field("boxes")->offsets == (std::vector<int64_t>{0, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(g.field("boxes")->floats == (std::vector<float>{0.5f, 0.25f, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4}),
             boost::test_tools::per_element());
  BOOST_TEST(g.field("box_labels")->ints == (std::vector<int64_t>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(
      g.field("captions_text")->texts == (std::vector<std::string>{"two", "shapes", "", "a square", "one shape"}),
      boost::test_tools::per_element());
  BOOST_TEST(g.features == (std::vector<float>{2, 2.25f, 2.5f, 2.75f, 0, 0.25f, 0.5f, 0.75f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fields_survive_a_shard_in_memory_and_mapped) {
  TempDir dir;
  const Dataset d = boxed_images();
  auto info = write_shard(dir.file("part-0000.bin"), d);
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  BOOST_TEST(info->count == 3);
  for (bool mapped : {false, true}) {
    auto back = mapped ? map_shard(dir.file("part-0000.bin"), info->checksum)
                       : read_shard(dir.file("part-0000.bin"), info->checksum);
    BOOST_TEST_REQUIRE(back.ok(), back.error());
    BOOST_TEST(back->size() == 3);
    BOOST_TEST(back->labels.empty());
    BOOST_TEST(back->is_mapped() == mapped);
    BOOST_TEST(std::vector<float>(back->feature_data(), back->feature_data() + 12) == d.features,
               boost::test_tools::per_element());
    check_same_fields(*back, d);
  }
}

BOOST_AUTO_TEST_CASE(fields_beside_class_labels_and_without_features) {
  TempDir dir;
  Dataset labelled = boxed_images();
  labelled.labels = {4, 5, 6};
  auto info = write_shard(dir.file("labelled.bin"), labelled);
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  auto back = read_shard(dir.file("labelled.bin"), info->checksum);
  BOOST_TEST_REQUIRE(back.ok(), back.error());
  BOOST_TEST(back->labels == labelled.labels, boost::test_tools::per_element());
  check_same_fields(*back, labelled);

  // A window of tokens per example and nothing else: what a language model trains on.
  Dataset windows;
  RaggedField tokens{"tokens", FieldType::int64};
  tokens.append_ints(std::vector<int64_t>{1, 5, 6, 2}.data(), 4);
  tokens.append_ints(std::vector<int64_t>{1, 7, 8, 2}.data(), 4);
  windows.fields = {tokens};
  auto windows_info = write_shard(dir.file("windows.bin"), windows);
  BOOST_TEST_REQUIRE(windows_info.ok(), windows_info.error());
  auto windows_back = map_shard(dir.file("windows.bin"), windows_info->checksum);
  BOOST_TEST_REQUIRE(windows_back.ok(), windows_back.error());
  BOOST_TEST(windows_back->size() == 2);
  BOOST_TEST(windows_back->sample_numel() == 0);
  check_same_fields(*windows_back, windows);
}

BOOST_AUTO_TEST_CASE(a_dataset_without_fields_keeps_the_older_formats) {
  TempDir dir;
  Dataset d;
  d.sample_shape = {2};
  d.features = {1, 2, 3, 4};
  d.labels = {0, 1};
  auto info = write_shard(dir.file("plain.bin"), d);
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  const std::string bytes = read_file(dir.file("plain.bin"));
  BOOST_TEST(static_cast<int>(bytes[8]) == 1);  // the version word right after the magic
}

BOOST_AUTO_TEST_CASE(fields_that_disagree_with_the_dataset_are_not_written) {
  TempDir dir;
  Dataset d = boxed_images();
  d.fields[1].floats.pop_back();
  auto short_values = write_shard(dir.file("a.bin"), d);
  BOOST_TEST_REQUIRE(!short_values.ok());
  BOOST_TEST(contains(short_values.error(), "field 'boxes' holds 11 values for 3 items of width 4"),
             short_values.error());
  Dataset e = boxed_images();
  e.fields[2].append_ints(std::vector<int64_t>{1}.data(), 1);  // a fourth example in one field only
  auto extra = write_shard(dir.file("b.bin"), e);
  BOOST_TEST_REQUIRE(!extra.ok());
  BOOST_TEST(contains(extra.error(), "field 'box_labels' has 4 examples, the dataset 3"), extra.error());
  BOOST_TEST(!fs::exists(dir.file("a.bin")));
  BOOST_TEST(!fs::exists(dir.file("b.bin")));
}

BOOST_AUTO_TEST_CASE(a_damaged_field_tail_is_corruption_naming_the_shard) {
  TempDir dir;
  auto info = write_shard(dir.file("part-0000.bin"), boxed_images());
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  const std::string whole = read_file(dir.file("part-0000.bin"));
  // Cut inside the last text, and keep a consistent checksum so the parser itself must notice.
  for (size_t cut : {size_t{1}, size_t{9}, whole.size() / 3}) {
    write_file(dir.file("cut.bin"), whole.substr(0, whole.size() - cut));
    auto back = read_shard(dir.file("cut.bin"), file_checksum(dir.file("cut.bin")).value());
    BOOST_TEST_REQUIRE(!back.ok());
    BOOST_TEST(back.status().is_corruption(), back.error());
    BOOST_TEST(contains(back.error(), "cut.bin"), back.error());
  }
  write_file(dir.file("long.bin"), whole + "xy");
  auto long_back = read_shard(dir.file("long.bin"), file_checksum(dir.file("long.bin")).value());
  BOOST_TEST_REQUIRE(!long_back.ok());
  BOOST_TEST(contains(long_back.error(), "2 unexpected bytes after the last field"), long_back.error());
}

BOOST_AUTO_TEST_SUITE_END()
