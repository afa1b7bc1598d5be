#pragma once
// COCO-format data (`source = "coco"`): a captions or an instances annotations file with its images, one
// example per image of `images[]`, in that order. The image is the example's features (decoded and resized
// as datasets/images.hpp does, {channels, height, width} in [0, 1]); what the image holds is in ragged
// fields (datasets/dataset.hpp RaggedField), so that everything about one image stays in one example when
// the ETL shuffles and splits:
//   image_id       int64, one item: the image's COCO id (results files name images by it)
//   captions_text  text, one item per caption of the image, in file order          (captions files)
//   boxes          float32, width 4, one item per object: x, y, width, height in pixels of the resized
//                  image                                                           (instances files)
//   box_labels     int64, one item per box: its category's index in `categories` sorted by id, 0..K-1
//
// A captions file's `annotations[]` hold `image_id` and `caption`; an instances file's hold `image_id`,
// `bbox` ([x, y, width, height] in pixels of the original image) and `category_id`, and the file lists its
// `categories[]` (`id`, `name`). `images[]` entries hold `id`, `file_name` (relative to the image root) and
// optionally `width` and `height`: the size the boxes are measured in, which is the file's own size when
// they are absent (given, they also let images shrunk on disk keep their original boxes).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "datasets/images.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

// The names of the fields load_coco fills.
inline constexpr const char* kCocoImageIdField = "image_id";
inline constexpr const char* kCocoCaptionsField = "captions_text";
inline constexpr const char* kCocoBoxesField = "boxes";
inline constexpr const char* kCocoBoxLabelsField = "box_labels";

struct CocoOptions {
  std::string path;         // the dataset's folder
  std::string annotations;  // the annotations file: relative to `path`, or absolute
  std::string image_root;   // where images[].file_name are: relative to `path` (or absolute); empty: `path`
  ImageOptions images;      // size (0: the first image's), channels, resize; images.path and skip_bad unused
};

// What an annotations file holds, decided by its annotations: captions or boxes, never both.
enum class CocoKind { captions, instances };

// "captions" | "instances"
std::string to_string(CocoKind kind);

struct CocoData {
  CocoKind kind = CocoKind::captions;
  Dataset data;  // features and fields as above; no labels
  // Instances: category index -> its COCO id and name (sorted by id); empty for captions.
  std::vector<int64_t> category_ids;
  std::vector<std::string> category_names;
  int64_t images_without_captions = 0;  // captions: images left out, as there is nothing to learn from them
  int64_t crowd_boxes = 0;              // instances: iscrowd annotations left out (a region, not one object)
};

// Reads the annotations, checks every entry, then decodes the images. Errors name the annotations file and
// the entry (`annotations[17].bbox has 3 numbers`, `annotations[4].image_id 99 is not an id in images[]`),
// or the image file; nothing is returned on error. An image without boxes is a valid example; an image
// without captions is left out (counted, and said through `progress`).
Result<CocoData> load_coco(const CocoOptions& options, const std::function<void(const std::string&)>& progress = {});

}  // namespace cerebro::datasets
