// Image data (datasets/images.hpp) and memory-mapped shards (datasets/shard.hpp map_shard): real PNG and
// JPEG files written with stb, decoded back; every bad input an error naming its file or folder.
#include <stb/stb_image_write.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "datasets/images.hpp"
#include "datasets/prepare.hpp"
#include "datasets/shard.hpp"
#include "test/datasets/test_datasets_util.hpp"

namespace cerebro::datasets {
namespace {

using testing::contains;
using testing::TempDir;
namespace fs = std::filesystem;

// A gray h x w PNG whose pixel (r, c) is (seed * 31 + r * w + c) % 256.
void write_png(const fs::path& path, int h, int w, int seed) {
  fs::create_directories(path.parent_path());
  std::vector<unsigned char> pixels(static_cast<size_t>(h * w));
  for (int i = 0; i < h * w; ++i) pixels[static_cast<size_t>(i)] = static_cast<unsigned char>((seed * 31 + i) % 256);
  BOOST_REQUIRE(stbi_write_png(path.c_str(), w, h, 1, pixels.data(), w));
}

// root/train/{ankle,shirt}/ with 3 and 2 images, root/test/shirt/ with 1.
void write_tree(const fs::path& root, int h = 6, int w = 5) {
  for (int i = 0; i < 3; ++i) write_png(root / "train" / "ankle" / ("a" + std::to_string(i) + ".png"), h, w, i);
  for (int i = 0; i < 2; ++i) write_png(root / "train" / "shirt" / ("s" + std::to_string(i) + ".png"), h, w, 10 + i);
  write_png(root / "test" / "shirt" / "t0.png", h, w, 20);
  std::ofstream(root / "train" / "ankle" / "notes.txt") << "not an image, ignored\n";
}

BOOST_AUTO_TEST_CASE(a_folder_tree_decodes_into_classes_in_channel_first_floats) {
  TempDir dir;
  write_tree(dir.path());
  ImageOptions o;
  o.path = dir.path().string();
  o.resize = false;
  auto listing = list_images(o);
  BOOST_REQUIRE_MESSAGE(listing.ok(), listing.status().message());
  BOOST_TEST(listing->class_names == (std::vector<std::string>{"ankle", "shirt"}), boost::test_tools::per_element());
  BOOST_TEST(listing->train.size() == 5u);
  BOOST_TEST(listing->has_test);
  auto decoded = decode_images(o, *listing);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), decoded.status().message());
  BOOST_TEST(decoded->train.sample_shape == (std::vector<int64_t>{1, 6, 5}), boost::test_tools::per_element());
  BOOST_TEST(decoded->train.labels == (std::vector<int64_t>{0, 0, 0, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(decoded->test.labels == (std::vector<int64_t>{1}), boost::test_tools::per_element());
  // Pixel 7 of the second ankle image (seed 1): (31 + 7) / 255.
  BOOST_TEST(decoded->train.features[30 + 7] == 38 / 255.0f);

  // RGB, resized: three planes of the new size.
  o.channels = 3;
  o.resize = true;
  o.height = 4;
  o.width = 4;
  auto rgb = decode_images(o, *listing);
  BOOST_REQUIRE_MESSAGE(rgb.ok(), rgb.status().message());
  BOOST_TEST(rgb->train.sample_shape == (std::vector<int64_t>{3, 4, 4}), boost::test_tools::per_element());
  BOOST_TEST(rgb->train.features.size() == 5u * 48u);
}

BOOST_AUTO_TEST_CASE(a_csv_manifest_lists_jpeg_and_png_files_with_named_labels) {
  TempDir dir;
  write_png(dir.path() / "img" / "a.png", 4, 4, 1);
  std::vector<unsigned char> rgb(4 * 4 * 3, 200);
  BOOST_REQUIRE(stbi_write_jpg(dir.file("img/b.jpg").c_str(), 4, 4, 3, rgb.data(), 90));
  dir.write("labels.csv", "path,label\nimg/a.png,cat\n\"img/b.jpg\",dog\n");
  ImageOptions o;
  o.path = dir.file("labels.csv");
  auto listing = list_images(o);
  BOOST_REQUIRE_MESSAGE(listing.ok(), listing.status().message());
  BOOST_TEST(listing->class_names == (std::vector<std::string>{"cat", "dog"}), boost::test_tools::per_element());
  BOOST_TEST(!listing->has_test);
  auto decoded = decode_images(o, *listing);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), decoded.status().message());
  BOOST_TEST(decoded->train.labels == (std::vector<int64_t>{0, 1}), boost::test_tools::per_element());
  BOOST_TEST(std::abs(decoded->train.features[16] - 200 / 255.0f) < 0.02f);  // the JPEG's gray, within its loss

  dir.write("missing.csv", "path,label\nimg/none.png,cat\n");
  o.path = dir.file("missing.csv");
  auto missing = list_images(o);
  // The line is named, never what it holds: a spec may have named a file that is no manifest.
  BOOST_TEST(contains(missing.status().message(), "missing.csv: line 2: the path names no image file"),
             missing.status().message());
  BOOST_TEST(!contains(missing.status().message(), "none.png"), missing.status().message());
  dir.write("nolabel.csv", "file,class\nimg/a.png,cat\n");
  o.path = dir.file("nolabel.csv");
  const auto no_columns = list_images(o).status().message();
  BOOST_TEST(contains(no_columns, "the header needs the columns path and label"), no_columns);
  BOOST_TEST(!contains(no_columns, "class"), no_columns);
}

BOOST_AUTO_TEST_CASE(bad_images_are_errors_naming_the_file_or_folder) {
  TempDir dir;
  write_tree(dir.path());
  ImageOptions o;
  o.path = dir.path().string();
  o.height = 6;
  o.width = 5;
  o.resize = false;
  // Another size with resize off.
  write_png(dir.path() / "train" / "shirt" / "s9.png", 7, 5, 3);
  auto listing = list_images(o);
  BOOST_REQUIRE(listing.ok());
  auto wrong_size = decode_images(o, *listing);
  BOOST_TEST(contains(wrong_size.status().message(), (dir.path() / "train/shirt/s9.png").string() +
                                                         ": the image is 7x5 (height x width), expected 6x5"),
             wrong_size.status().message());
  fs::remove(dir.path() / "train" / "shirt" / "s9.png");

  // A corrupt image: an error naming it, or skipped and counted with skip_bad.
  testing::write_text((dir.path() / "train" / "shirt" / "s1.png").string(), "\x89PNG\r\n\x1a\n broken");
  listing = list_images(o);
  auto corrupt = decode_images(o, *listing);
  BOOST_TEST(corrupt.status().is_corruption());
  BOOST_TEST(
      contains(corrupt.status().message(), (dir.path() / "train/shirt/s1.png").string() + ": cannot decode the image"),
      corrupt.status().message());
  o.skip_bad = true;
  std::vector<std::string> lines;
  auto skipped = decode_images(o, *listing, [&](const std::string& l) { lines.push_back(l); });
  BOOST_REQUIRE_MESSAGE(skipped.ok(), skipped.status().message());
  BOOST_TEST(skipped->skipped == 1);
  BOOST_TEST(skipped->train.size() == 4);
  BOOST_TEST(contains(lines.at(0), "skipped 1 that could not be decoded"));
  // A class whose every image is bad does not vanish silently.
  testing::write_text((dir.path() / "train" / "shirt" / "s0.png").string(), "junk");
  auto emptied = decode_images(o, *list_images(o));
  BOOST_TEST(contains(emptied.status().message(), "no training image of class 'shirt' could be decoded"),
             emptied.status().message());

  // An empty class folder; a test class without a training folder.
  fs::create_directories(dir.path() / "train" / "sandal");
  auto empty = list_images(o);
  BOOST_TEST(
      contains(empty.status().message(), (dir.path() / "train/sandal").string() + ": class folder holds no images"),
      empty.status().message());
  fs::remove(dir.path() / "train" / "sandal");
  write_png(dir.path() / "test" / "bag" / "b.png", 6, 5, 1);
  auto stray = list_images(o);
  BOOST_TEST(contains(stray.status().message(), "class 'bag' has no folder under train/"), stray.status().message());
  o.path = dir.file("nowhere");
  BOOST_TEST(list_images(o).status().is_not_found());
}

// What `cerebro predict` reads: the images of a folder (flat and one level of subfolders) in path order,
// decoded without labels at a given size; errors name the folder or the file.
BOOST_AUTO_TEST_CASE(a_folder_to_predict_lists_flat_and_class_folder_images_and_decodes_them_in_order) {
  TempDir dir;
  write_tree(dir.path() / "tree");
  const fs::path test_folder = dir.path() / "tree" / "train";
  write_png(test_folder / "z-flat.png", 6, 5, 30);
  write_png(test_folder / "ankle" / "deeper" / "ignored.png", 6, 5, 31);  // two levels down: not listed
  auto files = list_image_folder(test_folder.string());
  BOOST_REQUIRE_MESSAGE(files.ok(), files.status().message());
  const std::vector<std::string> expected{
      (test_folder / "ankle/a0.png").string(), (test_folder / "ankle/a1.png").string(),
      (test_folder / "ankle/a2.png").string(), (test_folder / "shirt/s0.png").string(),
      (test_folder / "shirt/s1.png").string(), (test_folder / "z-flat.png").string()};
  BOOST_TEST(*files == expected, boost::test_tools::per_element());

  ImageOptions o;
  o.height = 6;
  o.width = 5;
  o.resize = false;
  auto decoded = decode_image_files(*files, o, "advice");
  BOOST_REQUIRE_MESSAGE(decoded.ok(), decoded.status().message());
  BOOST_TEST(decoded->sample_shape == (std::vector<int64_t>{1, 6, 5}), boost::test_tools::per_element());
  BOOST_TEST(decoded->size() == 6);
  BOOST_TEST(decoded->features[30 + 7] == 38 / 255.0f);             // a1.png (seed 1), pixel 7
  BOOST_TEST(decoded->features[5 * 30] == 30 * 31 % 256 / 255.0f);  // z-flat.png (seed 30), pixel 0

  write_png(test_folder / "other-size.png", 7, 5, 3);
  auto wrong = decode_image_files({(test_folder / "other-size.png").string()}, o, "the advice");
  BOOST_TEST(contains(wrong.status().message(), (test_folder / "other-size.png").string() +
                                                    ": the image is 7x5 (height x width), expected 6x5; the advice"),
             wrong.status().message());
  o.resize = true;
  auto resized = decode_image_files({(test_folder / "other-size.png").string()}, o, "the advice");
  BOOST_REQUIRE_MESSAGE(resized.ok(), resized.status().message());
  BOOST_TEST(resized->features.size() == 30u);

  fs::create_directories(dir.path() / "none" / "empty-class");
  testing::write_text(dir.file("none/readme.txt"), "no images here");
  auto none = list_image_folder(dir.file("none"));
  BOOST_TEST(contains(none.status().message(), dir.file("none") + ": the folder holds no images"),
             none.status().message());
  BOOST_TEST(list_image_folder(dir.file("nowhere")).status().is_not_found());
}

// The manifest of prepared images says whether they were resized (predict decodes new images the same way).
BOOST_AUTO_TEST_CASE(prepared_images_record_whether_they_were_resized) {
  TempDir dir;
  write_tree(dir.path() / "tree");
  for (bool resize : {false, true}) {
    PrepareOptions o;
    o.source = "images";
    o.images.path = (dir.path() / "tree").string();
    o.images.resize = resize;
    o.validation_fraction = 0;
    const std::string out = dir.file(resize ? "resized" : "as-is");
    auto prepared = prepare(o, out);
    BOOST_REQUIRE_MESSAGE(prepared.ok(), prepared.status().message());
    auto manifest = read_manifest(out);
    BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.status().message());
    BOOST_TEST(manifest->images_resized == resize);
  }
}

BOOST_AUTO_TEST_CASE(a_mapped_shard_holds_the_same_examples_without_copying_its_features) {
  TempDir dir;
  Dataset d;
  d.sample_shape = {1, 3, 3};  // 9 floats an example: the labels start at an offset not aligned for int64
  for (int i = 0; i < 5 * 9; ++i) d.features.push_back(static_cast<float>(i) * 0.5f);
  d.labels = {4, 3, 2, 1, 0};
  auto info = write_shard(dir.file("part-0000.bin"), d);
  BOOST_REQUIRE(info.ok());
  auto mapped = map_shard(dir.file("part-0000.bin"), info->checksum);
  BOOST_REQUIRE_MESSAGE(mapped.ok(), mapped.status().message());
  BOOST_TEST(mapped->is_mapped());
  BOOST_TEST(mapped->features.empty());
  BOOST_TEST(mapped->labels == d.labels, boost::test_tools::per_element());
  BOOST_TEST(std::vector<float>(mapped->feature_data(), mapped->feature_data() + 45) == d.features,
             boost::test_tools::per_element());
  // gather reads mapped features too (what a copy of a partition would use).
  auto copy = gather(*mapped, {4, 0}, 0, 2);
  BOOST_TEST(copy.features.at(0) == d.features.at(36));

  auto wrong = map_shard(dir.file("part-0000.bin"), "crc32:00000000");
  BOOST_TEST(wrong.status().is_corruption());
  BOOST_TEST(contains(wrong.status().message(), "part-0000.bin: checksum"), wrong.status().message());
  BOOST_TEST(map_shard(dir.file("none.bin"), info->checksum).status().is_not_found());
}

}  // namespace
}  // namespace cerebro::datasets
