// Shards and the manifest: round trips, checksum verification, truncation, bad documents.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "datasets/manifest.hpp"
#include "datasets/shard.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;
namespace fs = std::filesystem;

namespace {

Dataset sample_dataset(int64_t n) {
  Dataset d;
  d.sample_shape = {1, 2, 3};
  for (int64_t i = 0; i < n * 6; ++i) d.features.push_back(0.5f * float(i) - 3.0f);
  for (int64_t i = 0; i < n; ++i) d.labels.push_back(i * 1000003);  // wide values catch int64 handling
  return d;
}

void flip_byte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x01));
}

Manifest sample_manifest() {
  Manifest m;
  m.source = "csv";
  m.inputs = {"/data/train.csv"};
  m.seed = 18446744073709551615ull;  // the full uint64 range survives JSON
  m.train_examples = 7;
  m.sample_shape = {3};
  m.num_classes = 2;
  m.class_names = {"cat", "dog"};
  m.normalization_mode = "per_feature";
  m.normalization = {{0.1f, -2.5f, 1e-7f}, {1.0f, 0.333333f, 12345.678f}};
  m.partitions = {{"part-0000.bin", 4, 100, "crc32:00000001"}, {"part-0001.bin", 3, 90, "crc32:00000002"}};
  m.validation = {"validation.bin", 1, 50, "crc32:0000000a"};
  m.test = {"test.bin", 2, 60, "crc32:ffffffff"};
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shard)

BOOST_AUTO_TEST_CASE(round_trip) {
  TempDir dir;
  const Dataset d = sample_dataset(4);
  auto info = write_shard(dir.file("part-0000.bin"), d);
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  BOOST_TEST(info->file == "part-0000.bin");
  BOOST_TEST(info->count == 4);
  BOOST_TEST(info->bytes == static_cast<int64_t>(fs::file_size(dir.file("part-0000.bin"))));
  BOOST_TEST(info->checksum == file_checksum(dir.file("part-0000.bin")).value());
  BOOST_TEST(info->checksum.rfind("crc32:", 0) == 0u);
  BOOST_TEST(info->checksum.size() == 14u);
  BOOST_TEST(!fs::exists(dir.file("part-0000.bin.tmp")));

  auto back = read_shard(dir.file("part-0000.bin"), info->checksum);
  BOOST_TEST_REQUIRE(back.ok(), back.error());
  BOOST_TEST(back->sample_shape == d.sample_shape, boost::test_tools::per_element());
  BOOST_TEST(back->features == d.features, boost::test_tools::per_element());
  BOOST_TEST(back->labels == d.labels, boost::test_tools::per_element());

  auto empty_info = write_shard(dir.file("empty.bin"), sample_dataset(0));
  BOOST_TEST_REQUIRE(empty_info.ok(), empty_info.error());
  auto empty = read_shard(dir.file("empty.bin"), empty_info->checksum);
  BOOST_TEST_REQUIRE(empty.ok(), empty.error());
  BOOST_TEST(empty->size() == 0);
  BOOST_TEST(empty->sample_shape == d.sample_shape, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_flipped_byte_fails_the_checksum) {
  TempDir dir;
  auto info = write_shard(dir.file("part-0001.bin"), sample_dataset(3));
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  flip_byte(dir.file("part-0001.bin"), info->bytes / 2);
  auto back = read_shard(dir.file("part-0001.bin"), info->checksum);
  BOOST_TEST_REQUIRE(!back.ok());
  const std::string actual = file_checksum(dir.file("part-0001.bin")).value();
  BOOST_TEST(
      contains(back.error(), "part-0001.bin: checksum " + actual + " does not match the manifest's " + info->checksum),
      back.error());
}

BOOST_AUTO_TEST_CASE(truncated_and_foreign_files) {
  TempDir dir;
  auto info = write_shard(dir.file("s.bin"), sample_dataset(3));
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  fs::resize_file(dir.file("s.bin"), static_cast<uintmax_t>(info->bytes - 8));
  // With the truncated file's own checksum the length check is what catches it.
  auto back = read_shard(dir.file("s.bin"), file_checksum(dir.file("s.bin")).value());
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "s.bin: truncated"), back.error());
  // With the manifest's checksum the checksum catches it first.
  back = read_shard(dir.file("s.bin"), info->checksum);
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "does not match"), back.error());

  fs::resize_file(dir.file("s.bin"), 12);
  back = read_shard(dir.file("s.bin"), file_checksum(dir.file("s.bin")).value());
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "truncated"), back.error());

  // A corrupt header announcing absurd sizes is rejected by the length check, not by a giant allocation.
  info = write_shard(dir.file("huge.bin"), sample_dataset(2));
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  {
    std::fstream f(dir.file("huge.bin"), std::ios::in | std::ios::out | std::ios::binary);
    const int64_t huge = int64_t{1} << 62;
    f.seekp(16);  // magic, version, rank: then the three dims and the count
    for (int i = 0; i < 4; ++i) f.write(reinterpret_cast<const char*>(&huge), sizeof(huge));
  }
  back = read_shard(dir.file("huge.bin"), file_checksum(dir.file("huge.bin")).value());
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "huge.bin: truncated"), back.error());

  info = write_shard(dir.file("long.bin"), sample_dataset(2));
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  std::ofstream(dir.file("long.bin"), std::ios::binary | std::ios::app) << "extra";
  back = read_shard(dir.file("long.bin"), file_checksum(dir.file("long.bin")).value());
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "long.bin: corrupt: 5 unexpected bytes"), back.error());

  write_text(dir.file("foreign.bin"), "NOTASHARD and some more bytes");
  back = read_shard(dir.file("foreign.bin"), file_checksum(dir.file("foreign.bin")).value());
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), "foreign.bin: not a Cerebro shard"), back.error());
  BOOST_TEST(!contains(back.error(), "NOTASHAR"), back.error());

  back = read_shard(dir.file("absent.bin"), "crc32:00000000");
  BOOST_TEST_REQUIRE(!back.ok());
  BOOST_TEST(contains(back.error(), dir.file("absent.bin")), back.error());
}

// The codes callers branch on: a shard that fails its checksum is corrupt, a
// missing one not found, a file that is no shard at all bad input.
BOOST_AUTO_TEST_CASE(shard_failures_carry_their_code) {
  TempDir dir;
  auto info = write_shard(dir.file("part-0001.bin"), sample_dataset(3));
  BOOST_TEST_REQUIRE(info.ok(), info.error());
  flip_byte(dir.file("part-0001.bin"), info->bytes / 2);
  BOOST_TEST(read_shard(dir.file("part-0001.bin"), info->checksum).status().is_corruption());
  BOOST_TEST(read_shard(dir.file("absent.bin"), "crc32:00000000").status().is_not_found());
  write_text(dir.file("foreign.bin"), "NOTASHARD and some more bytes");
  BOOST_TEST(read_shard(dir.file("foreign.bin"), file_checksum(dir.file("foreign.bin")).value())
                 .status()
                 .is_invalid_argument());
  BOOST_TEST(read_shard(dir.path().string(), "crc32:00000000").status().is_invalid_argument());
}

BOOST_AUTO_TEST_CASE(manifest_round_trip) {
  TempDir dir;
  const Manifest m = sample_manifest();
  BOOST_TEST_REQUIRE(write_manifest(dir.path().string(), m).ok());
  BOOST_TEST(!fs::exists(dir.file("manifest.json.tmp")));
  auto back = read_manifest(dir.path().string());
  BOOST_TEST_REQUIRE(back.ok(), back.error());
  BOOST_TEST(back->format_version == 1);
  BOOST_TEST(back->source == m.source);
  BOOST_TEST(back->inputs == m.inputs, boost::test_tools::per_element());
  BOOST_TEST(back->seed == m.seed);
  BOOST_TEST(back->train_examples == m.train_examples);
  BOOST_TEST(back->sample_shape == m.sample_shape, boost::test_tools::per_element());
  BOOST_TEST(back->num_classes == m.num_classes);
  BOOST_TEST(back->class_names == m.class_names, boost::test_tools::per_element());
  BOOST_TEST(back->normalization_mode == m.normalization_mode);
  BOOST_TEST(back->normalization.mean == m.normalization.mean, boost::test_tools::per_element());  // exact
  BOOST_TEST(back->normalization.stddev == m.normalization.stddev, boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(back->partitions.size() == 2u);
  BOOST_TEST(back->partitions[1].file == "part-0001.bin");
  BOOST_TEST(back->partitions[1].count == 3);
  BOOST_TEST(back->partitions[1].bytes == 90);
  BOOST_TEST(back->partitions[1].checksum == "crc32:00000002");
  BOOST_TEST(back->validation.checksum == m.validation.checksum);
  BOOST_TEST(back->test.file == "test.bin");
  BOOST_TEST(back->test.count == 2);
}

BOOST_AUTO_TEST_CASE(manifest_errors) {
  TempDir dir;
  auto missing = read_manifest(dir.path().string());
  BOOST_TEST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.error(), dir.file("manifest.json")), missing.error());

  write_text(dir.file("manifest.json"), "{ \"format_version\": 1, ");
  auto bad = read_manifest(dir.path().string());
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), "manifest.json: not valid JSON"), bad.error());

  auto rewrite = [&](const std::function<void(nlohmann::json&)>& edit) {
    BOOST_TEST_REQUIRE(write_manifest(dir.path().string(), sample_manifest()).ok());
    std::ifstream in(dir.file("manifest.json"));
    nlohmann::json doc = nlohmann::json::parse(in);
    edit(doc);
    write_text(dir.file("manifest.json"), doc.dump());
    return read_manifest(dir.path().string());
  };
  auto r = rewrite([](nlohmann::json& doc) { doc.erase("partitions"); });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "missing key 'partitions'"), r.error());

  r = rewrite([](nlohmann::json& doc) { doc["validation"].erase("checksum"); });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "missing key 'validation.checksum'"), r.error());

  r = rewrite([](nlohmann::json& doc) { doc["num_classes"] = "ten"; });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "'num_classes' has the wrong type"), r.error());

  r = rewrite([](nlohmann::json& doc) { doc["train_examples"] = 8; });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "partitions hold 7 examples but train_examples is 8"), r.error());

  r = rewrite([](nlohmann::json& doc) { doc["format_version"] = 2; });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "format_version 2 is not supported"), r.error());

  r = rewrite([](nlohmann::json& doc) { doc["test"]["file"] = "../elsewhere.bin"; });
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.error(), "must be a plain file name"), r.error());
}

BOOST_AUTO_TEST_SUITE_END()
