#pragma once
// Image data (`source = "images"`): a folder tree or a CSV manifest of PNG/JPEG files, decoded with stb
// (Debian's libstb), resized to one size, grayscale or RGB, into a Dataset of shape {channels, height,
// width} with pixels scaled to [0, 1]. Normalisation, splits and shards are the ETL's, as for every source.
//
// Layouts of `path`:
//   a directory: path/train/<class>/*.png|jpg|jpeg, optionally path/test/<class>/... (the test classes
//     must be training classes). Classes are the training folder names, sorted; other files are ignored.
//   a .csv file: a header with the columns `path` and `label` (other columns ignored); image paths are
//     relative to the manifest's directory. Labels that are all non-negative integers are class indices,
//     otherwise the distinct names sorted become classes 0..k-1.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

struct ImageOptions {
  std::string path;               // a folder tree or a CSV manifest
  int64_t height = 0, width = 0;  // 0: the first training image's size
  int channels = 1;               // 1 (grayscale) or 3 (rgb)
  bool resize = true;             // false: an image of another size is an error naming it
  bool skip_bad = false;          // true: undecodable images are skipped and counted, not an error
};

struct ImageFile {
  std::string path;   // absolute
  int64_t label = 0;  // class index
};

// What the folder tree or manifest lists, before anything is decoded.
struct ImageListing {
  std::vector<ImageFile> train, test;
  bool has_test = false;
  std::vector<std::string> class_names;  // empty for integer labels from a manifest
};

// Lists the images. Errors name the folder or file: a missing path, no train/ folder, a class folder
// without images, a test class that is not a training class, a manifest without the path or label
// column, a listed image that does not exist.
Result<ImageListing> list_images(const ImageOptions& options);

struct DecodedImages {
  Dataset train, test;
  int64_t skipped = 0;  // with skip_bad: images that could not be decoded
};

// Decodes and resizes every listed image. Errors name the file: undecodable (with the decoder's reason;
// skipped and counted instead with skip_bad), another size with resize = false. A class left without
// images after skipping is an error naming it.
Result<DecodedImages> decode_images(const ImageOptions& options, const ImageListing& listing,
                                    const std::function<void(const std::string&)>& progress = {});

// The images a trained model predicts (`cerebro predict MODEL DATA`): the image files directly in `dir` and
// in its subfolders (dir/<class>/*.png|jpg, the layout of a train/ or test/ folder), sorted by path, hidden
// files ignored. An error names the folder when it holds none.
Result<std::vector<std::string>> list_image_folder(const std::string& dir);

// Decodes `files` in order, as decode_images does but without skipping (an undecodable file is an error
// naming it), into {channels, height, width} floats in [0, 1]; options.height and width must be set. Labels
// are 0. An image of another size with resize off is an error naming the file, its size, the expected one
// and then `wrong_size_advice`.
Result<Dataset> decode_image_files(const std::vector<std::string>& files, const ImageOptions& options,
                                   const std::string& wrong_size_advice);

struct ImageSize {
  int64_t height = 0, width = 0;
};

// An image file's own size, read from its header without decoding the pixels. A missing file is not_found,
// one stb cannot read is corruption; both name the file.
Result<ImageSize> image_file_size(const std::string& path);

// A picture of one example for a page (the report's and the dashboard's examples): its {C, H, W} values
// in [0, 1] (1 or 3 channels) as a PNG, shrunk to at most `longest_side` pixels on its longer side, as a
// data: URI (base64). `scale` receives the factor its pixels are of the example's.
Result<std::string> png_data_uri(const float* values, const std::vector<int64_t>& shape, int64_t longest_side,
                                 double* scale = nullptr);

}  // namespace cerebro::datasets
