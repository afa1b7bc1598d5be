// IDX loading: synthetic files (gzipped and plain) for the round trip and every error, and the real
// Fashion-MNIST when the Debian package is installed.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

#include "datasets/idx.hpp"
#include "test/datasets/test_datasets_util.hpp"

using namespace cerebro::datasets;
using namespace cerebro::datasets::testing;

BOOST_AUTO_TEST_SUITE(idx)

BOOST_AUTO_TEST_CASE(round_trip_gzipped_and_plain) {
  TempDir dir;
  for (bool gzipped : {true, false}) {
    const std::string images = dir.file(gzipped ? "img.gz" : "img"), labels = dir.file(gzipped ? "lab.gz" : "lab");
    write_gz(images, idx_images_bytes(5, 3, 4), gzipped);
    write_gz(labels, idx_labels_bytes(5), gzipped);
    auto data = load_idx(images, labels);
    BOOST_TEST_REQUIRE(data.ok(), data.error());
    BOOST_TEST(data->size() == 5);
    BOOST_TEST(data->sample_shape == (std::vector<int64_t>{1, 3, 4}), boost::test_tools::per_element());
    BOOST_TEST(data->sample_numel() == 12);
    BOOST_TEST_REQUIRE(data->features.size() == 60u);
    for (int i = 0; i < 5; ++i) {
      BOOST_TEST(data->labels[i] == i % 10);
      for (int p = 0; p < 12; ++p) {
        BOOST_TEST(data->features[i * 12 + p] == float((i * 7 + p) % 256) / 255.0f);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(pixels_are_scaled_to_unit_range) {
  TempDir dir;
  write_gz(dir.file("img"), idx_images_bytes(60, 2, 3), true);  // values cover 0..255
  write_gz(dir.file("lab"), idx_labels_bytes(60), true);
  auto data = load_idx(dir.file("img"), dir.file("lab"));
  BOOST_TEST_REQUIRE(data.ok(), data.error());
  const auto [lo, hi] = std::minmax_element(data->features.begin(), data->features.end());
  BOOST_TEST(*lo == 0.0f);
  BOOST_TEST(*hi == 1.0f);
}

BOOST_AUTO_TEST_CASE(wrong_magic_names_file_and_expected_not_what_it_found) {
  TempDir dir;
  write_gz(dir.file("img.gz"), idx_images_bytes(2, 2, 2, 0x00000801), true);
  write_gz(dir.file("lab.gz"), idx_labels_bytes(2), true);
  auto data = load_idx(dir.file("img.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("img.gz")), data.error());
  BOOST_TEST(contains(data.error(), "its magic number is not 0x00000803"), data.error());
  BOOST_TEST(!contains(data.error(), "801"), data.error());

  write_gz(dir.file("img.gz"), idx_images_bytes(2, 2, 2), true);
  write_gz(dir.file("lab.gz"), idx_labels_bytes(2, 0x00000803), true);
  data = load_idx(dir.file("img.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("lab.gz")), data.error());
  BOOST_TEST(contains(data.error(), "not an IDX file of labels: its magic number is not 0x00000801"), data.error());
}

BOOST_AUTO_TEST_CASE(truncated_pixels_and_labels) {
  TempDir dir;
  auto images = idx_images_bytes(5, 3, 4);
  images.resize(images.size() - 5);  // 55 of 60 pixel bytes
  write_gz(dir.file("img"), images, false);
  write_gz(dir.file("lab"), idx_labels_bytes(5), false);
  auto data = load_idx(dir.file("img"), dir.file("lab"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("img")), data.error());
  BOOST_TEST(contains(data.error(), "truncated: expected 60 bytes of pixel data, got 55"), data.error());

  write_gz(dir.file("img.gz"), idx_images_bytes(5, 3, 4), true);
  auto labels = idx_labels_bytes(5);
  labels.pop_back();
  write_gz(dir.file("lab.gz"), labels, true);
  data = load_idx(dir.file("img.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "lab.gz: truncated: expected 5 bytes of label data, got 4"), data.error());

  write_gz(dir.file("short"), {0, 0, 8}, false);  // not even a magic
  data = load_idx(dir.file("short"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "short: truncated"), data.error());
}

BOOST_AUTO_TEST_CASE(image_label_count_mismatch) {
  TempDir dir;
  write_gz(dir.file("img.gz"), idx_images_bytes(5, 2, 2), true);
  write_gz(dir.file("lab.gz"), idx_labels_bytes(4), true);
  auto data = load_idx(dir.file("img.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "5 images"), data.error());
  BOOST_TEST(contains(data.error(), "4 labels"), data.error());
}

BOOST_AUTO_TEST_CASE(zero_examples) {
  TempDir dir;
  write_gz(dir.file("img.gz"), idx_images_bytes(0, 2, 2), true);
  write_gz(dir.file("lab.gz"), idx_labels_bytes(0), true);
  auto data = load_idx(dir.file("img.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "zero examples"), data.error());
}

BOOST_AUTO_TEST_CASE(missing_files) {
  TempDir dir;
  write_gz(dir.file("lab.gz"), idx_labels_bytes(2), true);
  auto data = load_idx(dir.file("nope.gz"), dir.file("lab.gz"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), dir.file("nope.gz") + ": no such file"), data.error());
  write_gz(dir.file("img.gz"), idx_images_bytes(2, 2, 2), true);
  data = load_idx(dir.file("img.gz"), dir.file("missing-labels"));
  BOOST_TEST_REQUIRE(!data.ok());
  BOOST_TEST(contains(data.error(), "missing-labels: no such file"), data.error());
}

BOOST_AUTO_TEST_CASE(find_idx_files_prefers_existing_names) {
  TempDir dir;
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte.gz"}) {
    write_text(dir.file(name), "x");
  }
  auto files = find_idx_files(dir.path().string());
  BOOST_TEST_REQUIRE(files.ok(), files.error());
  BOOST_TEST(files->train_images == dir.file("train-images-idx3-ubyte.gz"));
  BOOST_TEST(files->train_labels == dir.file("train-labels-idx1-ubyte.gz"));
  BOOST_TEST(files->test_images == dir.file("t10k-images-idx3-ubyte"));
  BOOST_TEST(files->test_labels == dir.file("t10k-labels-idx1-ubyte.gz"));

  std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte.gz"));
  files = find_idx_files(dir.path().string());
  BOOST_TEST_REQUIRE(!files.ok());
  BOOST_TEST(contains(files.error(), dir.path().string()), files.error());
  BOOST_TEST(contains(files.error(), "t10k-labels-idx1-ubyte"), files.error());

  files = find_idx_files(dir.file("no-such-dir"));
  BOOST_TEST_REQUIRE(!files.ok());
  BOOST_TEST(contains(files.error(), "no-such-dir"), files.error());
}

BOOST_AUTO_TEST_CASE(real_fashion_mnist_when_installed) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::is_directory(dir)) {
    BOOST_TEST_MESSAGE("skipped: " << dir << " is absent (Debian package dataset-fashion-mnist)");
    return;
  }
  auto files = find_idx_files(dir);
  BOOST_TEST_REQUIRE(files.ok(), files.error());
  const auto start = std::chrono::steady_clock::now();
  auto train = load_idx(files->train_images, files->train_labels);
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST_REQUIRE(train.ok(), train.error());
  auto test = load_idx(files->test_images, files->test_labels);
  BOOST_TEST_REQUIRE(test.ok(), test.error());
  // Reported, not asserted: a speed goal is a benchmark, never a timed test
  // (this one failed under CI load).
  BOOST_TEST_MESSAGE("loaded 60000 Fashion-MNIST training images in " << train_seconds << " s");
  BOOST_TEST(train->size() == 60000);
  BOOST_TEST(test->size() == 10000);
  BOOST_TEST(train->sample_shape == (std::vector<int64_t>{1, 28, 28}), boost::test_tools::per_element());
  BOOST_TEST(test->sample_shape == (std::vector<int64_t>{1, 28, 28}), boost::test_tools::per_element());
  const std::set<int64_t> classes(train->labels.begin(), train->labels.end());
  BOOST_TEST(classes.size() == 10u);
  BOOST_TEST(*classes.begin() == 0);
  BOOST_TEST(*classes.rbegin() == 9);
}

BOOST_AUTO_TEST_SUITE_END()
