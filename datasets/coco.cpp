#include "datasets/coco.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/base/enum_names.hpp"
#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::array<EnumName<CocoKind>, 2> kCocoKindNames = {
    {{CocoKind::captions, "captions"}, {CocoKind::instances, "instances"}}};

// Instances files hold each object's outline as polygons or run-length masks: most of a real file's bytes,
// never read here, so the parser drops them instead of building them in memory.
constexpr std::string_view kUnreadOutlines = "segmentation";

constexpr const char* kResizeAdvice = "set resize = true to resize it";

struct ImageEntry {
  int64_t id = 0;
  std::string file_name;
  ImageSize declared;  // 0 x 0: not given, the file's own size counts
};

struct Box {
  std::array<double, 4> xywh{};
  int64_t label = 0;
};

// A value as a message shows it: its JSON type only, since no error shows what a file holds (the spec may
// have named a file that is not annotations at all; docs/CLUSTER.md "Data roots").
std::string describe(const json& v) { return v.type_name(); }

// Reads the entries of one annotations file; every error names the file and the entry.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Status fail(const std::string& message) const { return Status::invalid_argument(file_ + ": " + message); }

  // The array doc[key]; an error when it is missing or not an array.
  Status array(const json& doc, const char* key, const char* why, const json*& out) const {
    auto it = doc.find(key);
    if (it == doc.end()) return fail(fmt::format("no {} array ({})", key, why));
    if (!it->is_array()) return fail(fmt::format("{} is not an array but a {}", key, it->type_name()));
    out = &*it;
    return Status::ok_status();
  }

  Status object(const json& entry, const std::string& where) const {
    if (!entry.is_object()) return fail(fmt::format("{} is not an object but a {}", where, describe(entry)));
    return Status::ok_status();
  }

  Status integer(const json& entry, const std::string& where, const char* key, int64_t& out) const {
    auto it = entry.find(key);
    if (it == entry.end()) return fail(fmt::format("{} has no {}", where, key));
    if (!it->is_number_integer())
      return fail(fmt::format("{}.{} is not an integer but a {}", where, key, describe(*it)));
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(fmt::format("{}.{} is too large for a 64-bit integer", where, key));
    out = it->get<int64_t>();
    return Status::ok_status();
  }

  Status text(const json& entry, const std::string& where, const char* key, std::string& out) const {
    auto it = entry.find(key);
    if (it == entry.end()) return fail(fmt::format("{} has no {}", where, key));
    if (!it->is_string()) return fail(fmt::format("{}.{} is not a string but a {}", where, key, describe(*it)));
    out = it->get<std::string>();
    return Status::ok_status();
  }

  // images[]: ids unique, file names given, declared sizes positive.
  Status images(const json& list, std::vector<ImageEntry>& out, std::unordered_map<int64_t, size_t>& index_of) const {
    if (list.empty()) return fail("images[] is empty: there is nothing to learn from");
    out.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("images[{}]", i);
      const json& entry = list[i];
      ImageEntry image;
      if (Status s = object(entry, where); !s.ok()) return s;
      if (Status s = integer(entry, where, "id", image.id); !s.ok()) return s;
      if (Status s = text(entry, where, "file_name", image.file_name); !s.ok()) return s;
      if (image.file_name.empty()) return fail(where + ".file_name is empty");
      const bool has_width = entry.contains("width"), has_height = entry.contains("height");
      if (has_width != has_height)
        return fail(fmt::format("{} has a {} but no {}: give both or neither", where, has_width ? "width" : "height",
                                has_width ? "height" : "width"));
      if (has_width) {
        if (Status s = integer(entry, where, "width", image.declared.width); !s.ok()) return s;
        if (Status s = integer(entry, where, "height", image.declared.height); !s.ok()) return s;
        if (image.declared.width <= 0 || image.declared.height <= 0)
          return fail(fmt::format("{}: an image's width and height must be positive", where));
      }
      const auto [it, fresh] = index_of.emplace(image.id, i);
      if (!fresh) return fail(fmt::format("{}.id is also images[{}].id", where, it->second));
      out.push_back(std::move(image));
    }
    return Status::ok_status();
  }

  // The image an annotation belongs to.
  Status image_of(const json& entry, const std::string& where, const std::unordered_map<int64_t, size_t>& index_of,
                  size_t& out) const {
    int64_t id = 0;
    if (Status s = integer(entry, where, "image_id", id); !s.ok()) return s;
    auto it = index_of.find(id);
    if (it == index_of.end()) return fail(fmt::format("{}.image_id is not an id in images[]", where));
    out = it->second;
    return Status::ok_status();
  }

  // What the annotations hold: captions or boxes, decided by the first entry holding either.
  Result<CocoKind> kind(const json& annotations) const {
    std::optional<size_t> caption, box;
    for (size_t i = 0; i < annotations.size() && !(caption && box); ++i) {
      const json& entry = annotations[i];
      if (Status s = object(entry, fmt::format("annotations[{}]", i)); !s.ok()) return s;
      if (!caption && entry.contains("caption")) caption = i;
      if (!box && entry.contains("bbox")) box = i;
    }
    if (caption && box) {
      if (*caption == *box)
        return fail(
            fmt::format("annotations[{}] holds both a caption and a bbox: a file holds captions or "
                        "instances (boxes), not both",
                        *caption));
      return fail(
          fmt::format("annotations[{}] holds a caption and annotations[{}] a bbox: a file holds captions or "
                      "instances (boxes), not both",
                      *caption, *box));
    }
    if (caption) return CocoKind::captions;
    if (box) return CocoKind::instances;
    return fail(annotations.empty() ? "annotations[] is empty: expected a COCO captions or instances file"
                                    : "no entry of annotations[] holds a caption or a bbox: expected a COCO captions "
                                      "or instances file");
  }

  Status captions(const json& annotations, const std::unordered_map<int64_t, size_t>& index_of,
                  std::vector<std::vector<std::string>>& out) const {
    for (size_t i = 0; i < annotations.size(); ++i) {
      const std::string where = fmt::format("annotations[{}]", i);
      const json& entry = annotations[i];
      if (Status s = object(entry, where); !s.ok()) return s;
      size_t image = 0;
      if (Status s = image_of(entry, where, index_of, image); !s.ok()) return s;
      std::string caption;
      if (Status s = text(entry, where, "caption", caption); !s.ok()) return s;
      out[image].push_back(std::move(caption));
    }
    return Status::ok_status();
  }

  // categories[]: ids unique; sorted by id they give the class indices.
  Status categories(const json& list, std::vector<int64_t>& ids, std::vector<std::string>& names) const {
    std::vector<std::pair<int64_t, std::string>> found;
    std::unordered_map<int64_t, size_t> first_at;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("categories[{}]", i);
      const json& entry = list[i];
      std::pair<int64_t, std::string> category;
      if (Status s = object(entry, where); !s.ok()) return s;
      if (Status s = integer(entry, where, "id", category.first); !s.ok()) return s;
      if (Status s = text(entry, where, "name", category.second); !s.ok()) return s;
      const auto [it, fresh] = first_at.emplace(category.first, i);
      if (!fresh) return fail(fmt::format("{}.id is also categories[{}].id", where, it->second));
      found.push_back(std::move(category));
    }
    std::sort(found.begin(), found.end());
    for (auto& [id, name] : found) {
      ids.push_back(id);
      names.push_back(std::move(name));
    }
    return Status::ok_status();
  }

  Status boxes(const json& annotations, const std::unordered_map<int64_t, size_t>& index_of,
               const std::vector<int64_t>& category_ids, std::vector<std::vector<Box>>& out, int64_t& crowd) const {
    std::unordered_map<int64_t, int64_t> label_of;
    for (size_t k = 0; k < category_ids.size(); ++k) label_of.emplace(category_ids[k], static_cast<int64_t>(k));
    for (size_t i = 0; i < annotations.size(); ++i) {
      const std::string where = fmt::format("annotations[{}]", i);
      const json& entry = annotations[i];
      if (Status s = object(entry, where); !s.ok()) return s;
      size_t image = 0;
      if (Status s = image_of(entry, where, index_of, image); !s.ok()) return s;
      Box box;
      if (Status s = bbox(entry, where, box.xywh); !s.ok()) return s;
      int64_t category = 0;
      if (Status s = integer(entry, where, "category_id", category); !s.ok()) return s;
      auto it = label_of.find(category);
      if (it == label_of.end()) return fail(fmt::format("{}.category_id is not an id in categories", where));
      box.label = it->second;
      int64_t is_crowd = 0;
      if (entry.contains("iscrowd")) {
        if (Status s = integer(entry, where, "iscrowd", is_crowd); !s.ok()) return s;
        if (is_crowd != 0 && is_crowd != 1) return fail(fmt::format("{}.iscrowd is not 0 or 1", where));
      }
      // A crowd annotation marks a region of many objects, not one box a detector should find.
      if (is_crowd == 1) {
        ++crowd;
        continue;
      }
      out[image].push_back(box);
    }
    return Status::ok_status();
  }

 private:
  Status bbox(const json& entry, const std::string& where, std::array<double, 4>& out) const {
    auto it = entry.find("bbox");
    if (it == entry.end()) return fail(fmt::format("{} has no bbox", where));
    if (!it->is_array())
      return fail(fmt::format("{}.bbox is not an array of 4 numbers but a {}", where, describe(*it)));
    if (it->size() != 4)
      return fail(fmt::format("{}.bbox has {} numbers, expected 4 (x, y, width, height)", where, it->size()));
    for (size_t k = 0; k < 4; ++k) {
      const json& v = (*it)[k];
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        return fail(fmt::format("{}.bbox[{}] is not a finite number but a {}", where, k, describe(v)));
      out[k] = v.get<double>();
    }
    if (out[2] <= 0 || out[3] <= 0)
      return fail(fmt::format("{}.bbox: a box's width and height must be positive", where));
    return Status::ok_status();
  }

  std::string file_;
};

// `name` relative to `base` unless it is absolute.
fs::path under(const std::string& base, const std::string& name) {
  const fs::path p(name);
  return (p.is_absolute() ? p : fs::path(base) / p).lexically_normal();
}

}  // namespace

std::string to_string(CocoKind kind) { return enum_name(kCocoKindNames, kind); }

Result<CocoData> load_coco(const CocoOptions& o, const std::function<void(const std::string&)>& progress) {
  if (o.images.channels != 1 && o.images.channels != 3)
    return Status::invalid_argument(fmt::format("coco: {} channels, expected 1 or 3", o.images.channels));
  if (o.annotations.empty()) return Status::invalid_argument("coco: no annotations file given");
  const std::string file = under(o.path, o.annotations).string();
  const fs::path root = o.image_root.empty() ? fs::path(o.path) : under(o.path, o.image_root);
  const Reader r(file);

  json doc;
  {
    auto text = read_whole_file(file);
    if (!text) return text.status();
    const json::parser_callback_t drop_outlines = [](int, json::parse_event_t event, json& parsed) {
      return !(event == json::parse_event_t::key && parsed.is_string() &&
               parsed.get_ref<const std::string&>() == kUnreadOutlines);
    };
    try {
      doc = json::parse(*text, drop_outlines);
    } catch (const json::parse_error& e) {
      return Status::invalid_argument(fmt::format("{}: not valid JSON (at byte {})", file, e.byte));
    } catch (const json::exception&) {
      return Status::invalid_argument(fmt::format("{}: not valid JSON", file));
    }
  }
  if (!doc.is_object()) return r.fail(fmt::format("not a COCO annotations object but a {}", doc.type_name()));

  const json* image_list = nullptr;
  const json* annotations = nullptr;
  if (Status s = r.array(doc, "images", "COCO lists the images in images[]", image_list); !s.ok()) return s;
  if (Status s = r.array(doc, "annotations", "COCO lists the captions or boxes in annotations[]", annotations); !s.ok())
    return s;
  std::vector<ImageEntry> images;
  std::unordered_map<int64_t, size_t> index_of;
  if (Status s = r.images(*image_list, images, index_of); !s.ok()) return s;
  auto kind = r.kind(*annotations);
  if (!kind) return kind.status();

  CocoData out;
  out.kind = *kind;
  std::vector<std::vector<std::string>> captions(images.size());
  std::vector<std::vector<Box>> boxes(images.size());
  if (out.kind == CocoKind::captions) {
    if (Status s = r.captions(*annotations, index_of, captions); !s.ok()) return s;
  } else {
    const json* categories = nullptr;
    if (Status s = r.array(doc, "categories", "an instances file names its categories", categories); !s.ok()) return s;
    if (Status s = r.categories(*categories, out.category_ids, out.category_names); !s.ok()) return s;
    if (Status s = r.boxes(*annotations, index_of, out.category_ids, boxes, out.crowd_boxes); !s.ok()) return s;
  }
  doc = json();  // the entries are copied out; the document may be large

  // The examples: every image, but for captions only those with something to learn.
  std::vector<size_t> kept;
  for (size_t i = 0; i < images.size(); ++i) {
    if (out.kind == CocoKind::captions && captions[i].empty()) {
      ++out.images_without_captions;
      continue;
    }
    kept.push_back(i);
  }
  if (kept.empty()) return r.fail("no image in images[] has a caption");
  std::vector<std::string> paths;
  paths.reserve(kept.size());
  for (size_t i : kept) {
    const fs::path p = under(root.string(), images[i].file_name);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      return Status::not_found(
          fmt::format("{}: images[{}].file_name names no image file under {}", file, i, root.string()));
    paths.push_back(p.string());
  }

  ImageOptions decode = o.images;
  if (decode.height == 0 || decode.width == 0) {
    // No image size given: the first image's, as for image folders.
    auto first = image_file_size(paths.front());
    if (!first) return first.status();
    decode.height = first->height;
    decode.width = first->width;
  }

  int64_t items = 0;
  for (size_t i : kept)
    items += static_cast<int64_t>(out.kind == CocoKind::captions ? captions[i].size() : boxes[i].size());
  if (progress) {
    if (out.kind == CocoKind::captions) {
      progress(fmt::format("{}: {} images with {} captions{}", file, kept.size(), items,
                           out.images_without_captions
                               ? fmt::format(", left out {} images without a caption", out.images_without_captions)
                               : std::string()));
    } else {
      progress(fmt::format(
          "{}: {} images with {} boxes of {} categories{}", file, kept.size(), items, out.category_ids.size(),
          out.crowd_boxes ? fmt::format(", left out {} crowd annotations", out.crowd_boxes) : std::string()));
    }
  }

  RaggedField ids{kCocoImageIdField, FieldType::int64};
  RaggedField texts{kCocoCaptionsField, FieldType::text};
  RaggedField box_field{kCocoBoxesField, FieldType::float32, 4};
  RaggedField labels{kCocoBoxLabelsField, FieldType::int64};
  for (size_t k = 0; k < kept.size(); ++k) {
    const size_t i = kept[k];
    ids.append_ints(&images[i].id, 1);
    if (out.kind == CocoKind::captions) {
      texts.append_texts(std::move(captions[i]));
      continue;
    }
    // Boxes are measured in the image's declared size (or the file's), the features in the decoded size.
    ImageSize frame = images[i].declared;
    if (frame.width == 0) {
      auto size = image_file_size(paths[k]);
      if (!size) return size.status();
      frame = *size;
    }
    const double sx = static_cast<double>(decode.width) / static_cast<double>(frame.width);
    const double sy = static_cast<double>(decode.height) / static_cast<double>(frame.height);
    std::vector<float> values;
    std::vector<int64_t> classes;
    for (const Box& b : boxes[i]) {
      values.push_back(static_cast<float>(b.xywh[0] * sx));
      values.push_back(static_cast<float>(b.xywh[1] * sy));
      values.push_back(static_cast<float>(b.xywh[2] * sx));
      values.push_back(static_cast<float>(b.xywh[3] * sy));
      classes.push_back(b.label);
    }
    const auto count = static_cast<int64_t>(classes.size());
    box_field.append_floats(values.data(), count);
    labels.append_ints(classes.data(), count);
  }

  auto decoded = decode_image_files(paths, decode, kResizeAdvice);
  if (!decoded) return decoded.status();
  out.data = std::move(*decoded);
  out.data.labels.clear();  // the targets are the fields
  out.data.labels.shrink_to_fit();
  out.data.fields.push_back(std::move(ids));
  if (out.kind == CocoKind::captions) {
    out.data.fields.push_back(std::move(texts));
  } else {
    out.data.fields.push_back(std::move(box_field));
    out.data.fields.push_back(std::move(labels));
  }
  if (progress)
    progress(fmt::format("decoded {} images to {}x{}x{}", paths.size(), decode.channels, decode.height, decode.width));
  return out;
}

}  // namespace cerebro::datasets
