#include "datasets/images.hpp"

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "datasets/image_files.hpp"
#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

namespace fs = std::filesystem;

namespace {

bool hidden(const fs::path& p) { return !p.filename().empty() && p.filename().string()[0] == '.'; }

// Subfolders of `dir`, sorted by name (hidden ones ignored).
Result<std::vector<fs::path>> class_folders(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec) && !hidden(it->path())) out.push_back(it->path());
  if (ec) return Status::io_error(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

// The image files of one class folder, sorted by name: an empty folder is an error naming it.
Result<std::vector<fs::path>> images_in(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::path> out;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !hidden(it->path()) && is_image_file(it->path())) out.push_back(it->path());
  if (ec) return Status::io_error(fmt::format("{}: cannot list: {}", folder.string(), ec.message()));
  if (out.empty())
    return Status::invalid_argument(
        fmt::format("{}: class folder holds no images (.png, .jpg or .jpeg)", folder.string()));
  std::sort(out.begin(), out.end());
  return out;
}

Result<ImageListing> list_tree(const fs::path& root) {
  ImageListing listing;
  const fs::path train_dir = root / "train";
  std::error_code ec;
  if (!fs::is_directory(train_dir, ec))
    return Status::invalid_argument(
        fmt::format("{}: no train/ folder (expected train/<class>/*.png|jpg)", root.string()));
  auto classes = class_folders(train_dir);
  if (!classes) return classes.status();
  if (classes->empty())
    return Status::invalid_argument(
        fmt::format("{}: no class folders (expected train/<class>/*.png|jpg)", train_dir.string()));
  std::map<std::string, int64_t> index_of;
  for (const auto& folder : *classes) {
    const int64_t label = static_cast<int64_t>(listing.class_names.size());
    listing.class_names.push_back(folder.filename().string());
    index_of[folder.filename().string()] = label;
    auto files = images_in(folder);
    if (!files) return files.status();
    for (const auto& f : *files) listing.train.push_back({f.string(), label});
  }
  const fs::path test_dir = root / "test";
  if (fs::is_directory(test_dir, ec)) {
    listing.has_test = true;
    auto test_classes = class_folders(test_dir);
    if (!test_classes) return test_classes.status();
    if (test_classes->empty()) return Status::invalid_argument(fmt::format("{}: no class folders", test_dir.string()));
    for (const auto& folder : *test_classes) {
      auto it = index_of.find(folder.filename().string());
      if (it == index_of.end())
        return Status::invalid_argument(
            fmt::format("{}: class '{}' has no folder under train/", folder.string(), folder.filename().string()));
      auto files = images_in(folder);
      if (!files) return files.status();
      for (const auto& f : *files) listing.test.push_back({f.string(), it->second});
    }
  }
  return listing;
}

// Splits one CSV line into cells ("" inside quotes for a quote).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        cells.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cells.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  for (auto& cell : cells) {
    const auto first = cell.find_first_not_of(" \t"), last = cell.find_last_not_of(" \t");
    cell = first == std::string::npos ? std::string() : cell.substr(first, last - first + 1);
  }
  return cells;
}

Result<ImageListing> list_manifest(const fs::path& manifest) {
  auto text = read_whole_file(manifest.string());
  if (!text) return text.status();
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> line_numbers;
  size_t pos = 0;
  for (int64_t number = 1; pos < text->size(); ++number) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rows.push_back(cells_of(line));
    line_numbers.push_back(number);
  }
  if (rows.empty()) return Status::invalid_argument(manifest.string() + ": the manifest is empty");
  const auto& header = rows[0];
  const auto path_at = std::find(header.begin(), header.end(), "path");
  const auto label_at = std::find(header.begin(), header.end(), "label");
  if (path_at == header.end() || label_at == header.end())
    return Status::invalid_argument(fmt::format("{}: the header needs the columns path and label", manifest.string()));
  const size_t path_col = static_cast<size_t>(path_at - header.begin());
  const size_t label_col = static_cast<size_t>(label_at - header.begin());
  ImageListing listing;
  std::vector<std::string> raw_labels;
  const fs::path base = manifest.parent_path();
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() != header.size())
      return Status::invalid_argument(fmt::format("{}: line {}: expected {} cells as in the header, found {}",
                                                  manifest.string(), line_numbers[r], header.size(), row.size()));
    if (row[path_col].empty() || row[label_col].empty())
      return Status::invalid_argument(
          fmt::format("{}: line {}: empty path or label", manifest.string(), line_numbers[r]));
    fs::path image = row[path_col];
    if (image.is_relative()) image = base / image;
    std::error_code ec;
    if (!fs::is_regular_file(image, ec))
      return Status::not_found(
          fmt::format("{}: line {}: the path names no image file", manifest.string(), line_numbers[r]));
    listing.train.push_back({image.lexically_normal().string(), 0});
    raw_labels.push_back(row[label_col]);
  }
  if (listing.train.empty()) return Status::invalid_argument(manifest.string() + ": no images listed after the header");
  const bool integers = std::all_of(raw_labels.begin(), raw_labels.end(), [](const std::string& l) {
    return !l.empty() && l.size() <= 9 && std::all_of(l.begin(), l.end(), [](char c) { return c >= '0' && c <= '9'; });
  });
  std::map<std::string, int64_t> index_of;
  if (!integers) {
    for (const auto& l : raw_labels) index_of.emplace(l, 0);
    for (auto& [name, index] : index_of) {
      index = static_cast<int64_t>(listing.class_names.size());
      listing.class_names.push_back(name);
    }
  }
  for (size_t i = 0; i < raw_labels.size(); ++i)
    listing.train[i].label = integers ? std::stoll(raw_labels[i]) : index_of[raw_labels[i]];
  return listing;
}

struct StbiFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

// Decodes one file into `out` ({channels, height, width} floats in [0, 1]). `expected_*` 0: any size
// (the caller fixes it from the first image). Returns a status whose code tells a bad file (corruption)
// from a wrong size (invalid_argument).
constexpr const char* kResizeAdvice = "set resize = true to resize it";

Status decode_one(const ImageFile& file, const ImageOptions& o, int64_t height, int64_t width, std::vector<float>& out,
                  const std::string& wrong_size_advice = kResizeAdvice) {
  auto bytes = read_whole_file(file.path);
  if (!bytes) return Status::corruption(bytes.status().message());
  int w = 0, h = 0, channels_in_file = 0;
  std::unique_ptr<unsigned char, StbiFree> pixels(stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes->data()),
                                                                        static_cast<int>(bytes->size()), &w, &h,
                                                                        &channels_in_file, o.channels));
  if (!pixels) {
    const char* why = stbi_failure_reason();
    return Status::corruption(fmt::format("{}: cannot decode the image: {}", file.path, why ? why : "unknown reason"));
  }
  const int c = o.channels;
  std::vector<unsigned char> resized;
  const unsigned char* src = pixels.get();
  if (h != height || w != width) {
    if (!o.resize)
      return Status::invalid_argument(fmt::format("{}: the image is {}x{} (height x width), expected {}x{}; {}",
                                                  file.path, h, w, height, width, wrong_size_advice));
    resized.resize(static_cast<size_t>(height * width * c));
    if (!stbir_resize_uint8(src, w, h, 0, resized.data(), static_cast<int>(width), static_cast<int>(height), 0, c))
      return Status::corruption(fmt::format("{}: cannot resize the image from {}x{}", file.path, h, w));
    src = resized.data();
  }
  // stb gives rows of interleaved channels (HWC); samples are channels first (CHW), as LibTorch's convolutions take
  // them.
  const size_t plane = static_cast<size_t>(height * width);
  const size_t start = out.size();
  out.resize(start + plane * static_cast<size_t>(c));
  for (size_t i = 0; i < plane; ++i)
    for (int ch = 0; ch < c; ++ch) out[start + static_cast<size_t>(ch) * plane + i] = src[i * c + ch] / 255.0f;
  return Status::ok_status();
}

}  // namespace

Result<ImageListing> list_images(const ImageOptions& o) {
  if (o.channels != 1 && o.channels != 3)
    return Status::invalid_argument(fmt::format("images: {} channels, expected 1 or 3", o.channels));
  std::error_code ec;
  const fs::path path(o.path);
  if (fs::is_directory(path, ec)) return list_tree(path);
  if (fs::is_regular_file(path, ec)) {
    if (path.extension() != ".csv")
      return Status::invalid_argument(fmt::format("{}: expected a folder of class folders or a .csv manifest", o.path));
    return list_manifest(path);
  }
  return Status::not_found(fmt::format("{}: no such folder or manifest", o.path));
}

Result<DecodedImages> decode_images(const ImageOptions& o, const ImageListing& listing,
                                    const std::function<void(const std::string&)>& progress) {
  DecodedImages out;
  int64_t height = o.height, width = o.width;
  if (height == 0 || width == 0) {
    // No image_size: the first decodable training image's size.
    for (const auto& f : listing.train) {
      int w = 0, h = 0, comp = 0;
      if (stbi_info(f.path.c_str(), &w, &h, &comp)) {
        height = h, width = w;
        break;
      }
      if (!o.skip_bad)
        return Status::corruption(fmt::format("{}: cannot decode the image: {}", f.path, stbi_failure_reason()));
    }
    if (height == 0) return Status::invalid_argument(fmt::format("{}: none of the images can be decoded", o.path));
  }
  auto decode_all = [&](const std::vector<ImageFile>& files, Dataset& d, const char* which) -> Status {
    d.sample_shape = {o.channels, height, width};
    d.features.reserve(files.size() * static_cast<size_t>(o.channels * height * width));
    d.labels.reserve(files.size());
    std::map<int64_t, int64_t> per_class;
    for (const auto& f : files) {
      Status s = decode_one(f, o, height, width, d.features);
      if (s.is_corruption() && o.skip_bad) {
        ++out.skipped;
        continue;
      }
      if (!s.ok()) return s;
      d.labels.push_back(f.label);
      ++per_class[f.label];
    }
    if (d.labels.empty())
      return Status::invalid_argument(fmt::format("{}: no {} image could be decoded", o.path, which));
    // A class folder whose every image was skipped would silently vanish from training.
    std::map<int64_t, int64_t> listed;
    for (const auto& f : files) ++listed[f.label];
    for (const auto& [label, count] : listed) {
      if (per_class[label] == 0) {
        const std::string name = label < static_cast<int64_t>(listing.class_names.size())
                                     ? listing.class_names[static_cast<size_t>(label)]
                                     : std::to_string(label);
        return Status::invalid_argument(
            fmt::format("{}: no {} image of class '{}' could be decoded ({} skipped)", o.path, which, name, count));
      }
    }
    return Status::ok_status();
  };
  if (Status s = decode_all(listing.train, out.train, "training"); !s.ok()) return s;
  if (listing.has_test) {
    if (Status s = decode_all(listing.test, out.test, "test"); !s.ok()) return s;
  }
  if (progress) {
    progress(fmt::format(
        "decoded {} images to {}x{}x{}{}", out.train.size() + out.test.size(), o.channels, height, width,
        out.skipped ? fmt::format(", skipped {} that could not be decoded (skip_bad)", out.skipped) : std::string()));
  }
  return out;
}

Result<std::vector<std::string>> list_image_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::not_found(fmt::format("{}: no such folder", dir));
  std::vector<std::string> files;
  auto add_images_of = [&](const fs::path& folder) -> Status {
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && !hidden(it->path()) && is_image_file(it->path()))
        files.push_back(it->path().string());
    if (ec) return Status::io_error(fmt::format("{}: cannot list: {}", folder.string(), ec.message()));
    return Status::ok_status();
  };
  if (Status s = add_images_of(dir); !s.ok()) return s;
  auto subfolders = class_folders(dir);
  if (!subfolders) return subfolders.status();
  for (const auto& folder : *subfolders)
    if (Status s = add_images_of(folder); !s.ok()) return s;
  if (files.empty())
    return Status::invalid_argument(
        fmt::format("{}: the folder holds no images (.png, .jpg or .jpeg), neither in it nor "
                    "in its subfolders (<class>/*.png|jpg)",
                    dir));
  std::sort(files.begin(), files.end());
  return files;
}

Result<Dataset> decode_image_files(const std::vector<std::string>& files, const ImageOptions& o,
                                   const std::string& wrong_size_advice) {
  if (o.channels != 1 && o.channels != 3)
    return Status::invalid_argument(fmt::format("images: {} channels, expected 1 or 3", o.channels));
  if (o.height <= 0 || o.width <= 0)
    return Status::invalid_argument(
        fmt::format("images: size {}x{}, expected a positive height and width", o.height, o.width));
  Dataset d;
  d.sample_shape = {o.channels, o.height, o.width};
  d.features.reserve(files.size() * static_cast<size_t>(o.channels * o.height * o.width));
  for (const auto& path : files) {
    if (Status s = decode_one({path, 0}, o, o.height, o.width, d.features, wrong_size_advice); !s.ok()) return s;
    d.labels.push_back(0);
  }
  return d;
}

Result<ImageSize> image_file_size(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::not_found(fmt::format("{}: no such image file", path));
  int w = 0, h = 0, comp = 0;
  if (!stbi_info(path.c_str(), &w, &h, &comp)) {
    const char* why = stbi_failure_reason();
    return Status::corruption(fmt::format("{}: cannot decode the image: {}", path, why ? why : "unknown reason"));
  }
  return ImageSize{h, w};
}

namespace {

std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += digits[(chunk >> 18) & 63];
    out += digits[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[chunk & 63] : '=';
  }
  return out;
}

}  // namespace

Result<std::string> png_data_uri(const float* values, const std::vector<int64_t>& shape, int64_t longest_side,
                                 double* scale) {
  if (shape.size() != 3 || (shape[0] != 1 && shape[0] != 3) || shape[1] < 1 || shape[2] < 1 || longest_side < 1)
    return Status::invalid_argument("a picture needs {1 or 3 channels, height, width} values");
  const int channels = static_cast<int>(shape[0]), height = static_cast<int>(shape[1]),
            width = static_cast<int>(shape[2]);
  // Channel-first floats to interleaved bytes.
  std::vector<unsigned char> pixels(static_cast<size_t>(channels) * height * width);
  for (int c = 0; c < channels; ++c)
    for (int i = 0; i < height * width; ++i) {
      const float v = std::clamp(values[static_cast<size_t>(c) * height * width + i], 0.0f, 1.0f);
      pixels[static_cast<size_t>(i) * channels + c] = static_cast<unsigned char>(std::lround(v * 255.0f));
    }
  const double factor = std::min(1.0, static_cast<double>(longest_side) / std::max(height, width));
  int out_height = height, out_width = width;
  if (factor < 1.0) {
    out_height = std::max(1, static_cast<int>(std::lround(height * factor)));
    out_width = std::max(1, static_cast<int>(std::lround(width * factor)));
    std::vector<unsigned char> shrunk(static_cast<size_t>(channels) * out_height * out_width);
    if (!stbir_resize_uint8(pixels.data(), width, height, 0, shrunk.data(), out_width, out_height, 0, channels))
      return Status::internal("the picture could not be resized");
    pixels = std::move(shrunk);
  }
  if (scale) *scale = static_cast<double>(out_width) / width;
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, out_width, out_height, channels, pixels.data(), out_width * channels))
    return Status::internal("the picture could not be written as a PNG");
  return "data:image/png;base64," + base64(png);
}

}  // namespace cerebro::datasets
