// COCO-format data (datasets/coco.hpp): captions and instances files with real PNG images, their fields
// through the ETL into shards, and every malformed entry an error naming the file and the entry.
#include <stb/stb_image_write.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/coco.hpp"
#include "datasets/prepare.hpp"
#include "datasets/tokenizer.hpp"
#include "test/datasets/test_datasets_util.hpp"

namespace cerebro::datasets {
namespace {

using nlohmann::json;
using testing::contains;
using testing::TempDir;
using testing::write_text;
namespace fs = std::filesystem;

void write_png(const fs::path& path, int h, int w) {
  fs::create_directories(path.parent_path());
  std::vector<unsigned char> pixels(static_cast<size_t>(h * w), 128);
  BOOST_REQUIRE(stbi_write_png(path.c_str(), w, h, 1, pixels.data(), w));
}

// images/0.png ... images/{n-1}.png of 8x8 (image 1 of 16x8: width x height), with their images[] entries.
json write_images(const TempDir& dir, int n) {
  json images = json::array();
  for (int i = 0; i < n; ++i) {
    const int w = i == 1 ? 16 : 8;
    write_png(dir.path() / "images" / (std::to_string(i) + ".png"), 8, w);
    images.push_back({{"id", 100 + i}, {"file_name", std::to_string(i) + ".png"}});
  }
  return images;
}

CocoOptions options_for(const TempDir& dir, const std::string& annotations) {
  CocoOptions o;
  o.path = dir.path().string();
  o.annotations = annotations;
  o.image_root = "images";
  o.images.height = 4;
  o.images.width = 4;
  o.images.channels = 1;
  return o;
}

Status load_error(const TempDir& dir, const json& doc) {
  write_text(dir.file("bad.json"), doc.dump());
  auto loaded = load_coco(options_for(dir, "bad.json"));
  BOOST_REQUIRE(!loaded.ok());
  return loaded.status();
}

BOOST_AUTO_TEST_CASE(a_captions_file_gives_one_example_per_captioned_image) {
  TempDir dir;
  json doc = {{"images", write_images(dir, 3)},
              {"annotations",
               {{{"image_id", 100}, {"caption", "a gray square"}},
                {{"image_id", 102}, {"caption", "gray"}},
                {{"image_id", 100}, {"caption", "flat gray"}}}}};
  write_text(dir.file("captions.json"), doc.dump());
  std::vector<std::string> said;
  auto coco = load_coco(options_for(dir, "captions.json"), [&](const std::string& s) { said.push_back(s); });
  BOOST_REQUIRE_MESSAGE(coco.ok(), coco.status().message());
  BOOST_TEST((coco->kind == CocoKind::captions));
  BOOST_TEST(coco->images_without_captions == 1);  // image 101
  BOOST_TEST(coco->data.size() == 2);
  BOOST_TEST((coco->data.sample_shape == std::vector<int64_t>{1, 4, 4}));
  const RaggedField* ids = coco->data.field(kCocoImageIdField);
  const RaggedField* captions = coco->data.field(kCocoCaptionsField);
  BOOST_REQUIRE(ids != nullptr);
  BOOST_REQUIRE(captions != nullptr);
  BOOST_TEST((ids->ints == std::vector<int64_t>{100, 102}));
  BOOST_TEST(captions->items_of(0) == 2);
  BOOST_TEST(captions->texts.at(1) == "flat gray");
  BOOST_TEST(contains(said.front(), "left out 1 images without a caption"));
}

BOOST_AUTO_TEST_CASE(an_instances_file_scales_boxes_to_the_decoded_size_and_indexes_categories_by_id) {
  TempDir dir;
  json doc = {{"images", write_images(dir, 2)},
              {"categories", {{{"id", 7}, {"name", "circle"}}, {{"id", 3}, {"name", "square"}}}},
              {"annotations",
               {{{"image_id", 101}, {"bbox", {8, 4, 4, 2}}, {"category_id", 7}, {"segmentation", {{1, 2, 3}}}},
                {{"image_id", 101}, {"bbox", {0, 0, 16, 8}}, {"category_id", 3}, {"iscrowd", 1}},
                {{"image_id", 100}, {"bbox", {2, 2, 4, 4}}, {"category_id", 3}}}}};
  write_text(dir.file("instances.json"), doc.dump());
  auto coco = load_coco(options_for(dir, "instances.json"));
  BOOST_REQUIRE_MESSAGE(coco.ok(), coco.status().message());
  BOOST_TEST((coco->kind == CocoKind::instances));
  BOOST_TEST((coco->category_ids == std::vector<int64_t>{3, 7}));
  BOOST_TEST((coco->category_names == std::vector<std::string>{"square", "circle"}));
  BOOST_TEST(coco->crowd_boxes == 1);
  const RaggedField* boxes = coco->data.field(kCocoBoxesField);
  const RaggedField* labels = coco->data.field(kCocoBoxLabelsField);
  BOOST_REQUIRE(boxes != nullptr);
  BOOST_REQUIRE(labels != nullptr);
  // Image 100 is 8x8 shown at 4x4 (half), image 101 16 wide and 8 high (a quarter across, half down).
  BOOST_TEST((boxes->floats == std::vector<float>{1, 1, 2, 2, 2, 2, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST((labels->ints == std::vector<int64_t>{0, 1}));
}

BOOST_AUTO_TEST_CASE(malformed_entries_are_errors_naming_the_file_and_the_entry) {
  TempDir dir;
  const json images = write_images(dir, 1);
  const json categories = {{{"id", 1}, {"name", "square"}}};
  auto instances = [&](json annotation) {
    return json{{"images", images}, {"categories", categories}, {"annotations", {std::move(annotation)}}};
  };
  Status s = load_error(dir, instances({{"image_id", 100}, {"bbox", {1, 2, 3}}, {"category_id", 1}}));
  BOOST_TEST(contains(s.message(), "bad.json: annotations[0].bbox has 3 numbers"));
  s = load_error(dir, instances({{"image_id", 99}, {"bbox", {1, 2, 3, 4}}, {"category_id", 1}}));
  BOOST_TEST(contains(s.message(), "annotations[0].image_id is not an id in images[]"));
  BOOST_TEST(!contains(s.message(), "99"), s.message());  // what the file holds is never shown
  s = load_error(dir, instances({{"image_id", 100}, {"bbox", {1, 2, 0, 4}}, {"category_id", 1}}));
  BOOST_TEST(contains(s.message(), "must be positive"));
  s = load_error(dir, instances({{"image_id", 100}, {"bbox", {1, 2, 3, 4}}, {"category_id", 5}}));
  BOOST_TEST(contains(s.message(), "annotations[0].category_id is not an id in categories"));
  s = load_error(dir, {{"images", images}, {"annotations", {{{"image_id", 100}, {"caption", 5}}}}});
  BOOST_TEST(contains(s.message(), "annotations[0].caption is not a string"));
  s = load_error(dir, {{"images", {{{"id", 1}, {"file_name", "gone.png"}}}},
                       {"annotations", {{{"image_id", 1}, {"caption", "x"}}}}});
  BOOST_TEST(contains(s.message(), "images[0].file_name"));
  BOOST_TEST(contains(s.message(), "names no image file under"));
  BOOST_TEST(!contains(s.message(), "gone.png"), s.message());
  s = load_error(
      dir, {{"images", images},
            {"annotations", {{{"image_id", 100}, {"caption", "x"}}, {{"image_id", 100}, {"bbox", {1, 1, 1, 1}}}}}});
  BOOST_TEST(contains(s.message(), "not both"));
  write_text(dir.file("broken.json"), "{\"images\": [secret");
  auto broken = load_coco(options_for(dir, "broken.json"));
  BOOST_TEST(contains(broken.status().message(), "broken.json: not valid JSON (at byte"), broken.status().message());
  BOOST_TEST(!contains(broken.status().message(), "secret"), broken.status().message());
}

BOOST_AUTO_TEST_CASE(prepare_tokenizes_captions_and_keeps_boxes_and_category_ids) {
  TempDir dir;
  const json images = write_images(dir, 10);
  json captions = json::array(), boxes = json::array();
  for (int i = 0; i < 10; ++i) {
    captions.push_back({{"image_id", 100 + i}, {"caption", i % 2 ? "a gray square" : "a flat gray image"}});
    boxes.push_back({{"image_id", 100 + i}, {"bbox", {0, 0, 4, 4}}, {"category_id", 5 + i % 2}});
  }
  write_text(dir.file("captions.json"), json{{"images", images}, {"annotations", captions}}.dump());
  write_text(dir.file("instances.json"),
             json{{"images", images},
                  {"categories", {{{"id", 5}, {"name", "square"}}, {{"id", 6}, {"name", "circle"}}}},
                  {"annotations", boxes}}
                 .dump());

  PrepareOptions o;
  o.source = "coco";
  o.task = TaskKind::captioning;
  o.coco = options_for(dir, "captions.json");
  o.validation_fraction = 0.2;
  o.test_fraction = 0.0;
  auto manifest = prepare(o, dir.file("captioning"));
  BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.status().message());
  auto tokenizer = Tokenizer::from_json(manifest->tokenizer);
  BOOST_REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.status().message());
  BOOST_TEST(manifest->num_classes == kSpecialTokens + 5);  // a gray square flat image
  auto data = load_prepared(dir.file("captioning"));
  BOOST_REQUIRE_MESSAGE(data.ok(), data.status().message());
  const RaggedField* ids = data->validation->field(kCaptionTokensField);
  BOOST_REQUIRE(ids != nullptr);
  BOOST_TEST(data->validation->size() == 2);
  const std::string first = tokenizer->decode({ids->ints.begin(), ids->ints.begin() + ids->items_of(0)});
  BOOST_TEST((first == "a gray square" || first == "a flat gray image"));

  o.task = TaskKind::detection;
  o.coco = options_for(dir, "instances.json");
  manifest = prepare(o, dir.file("detection"));
  BOOST_REQUIRE_MESSAGE(manifest.ok(), manifest.status().message());
  BOOST_TEST((manifest->category_ids == std::vector<int64_t>{5, 6}));
  BOOST_TEST((manifest->class_names == std::vector<std::string>{"square", "circle"}));
  BOOST_TEST(manifest->num_classes == 2);
  data = load_prepared(dir.file("detection"));
  BOOST_REQUIRE_MESSAGE(data.ok(), data.status().message());
  int64_t with_boxes = 0;
  for (const auto& part : data->partitions) with_boxes += part->field(kCocoBoxesField)->items();
  BOOST_TEST(with_boxes == 8);

  // A captions file for a detection task says what it holds.
  o.coco = options_for(dir, "captions.json");
  auto wrong = prepare(o, dir.file("wrong"));
  BOOST_TEST(!wrong.ok());
  BOOST_TEST(contains(wrong.status().message(), "holds captions, but task detection needs boxes"));
}

}  // namespace
}  // namespace cerebro::datasets
