#include "datasets/shard.hpp"

#include <algorithm>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/checksum.hpp"
#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

// The format is little-endian and written with memcpy of host values.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shard I/O assumes a little-endian host");

namespace {

constexpr char kMagic[8] = {'C', 'R', 'B', 'S', 'H', 'R', 'D', '1'};
constexpr uint32_t kFormatVersion = 1;
// Version 2 (regression and multilabel, datasets/shard.hpp): float targets instead of class labels.
constexpr uint32_t kTargetsFormatVersion = 2;
// Version 3 (structured examples, datasets/shard.hpp): ragged fields after the labels, which are optional.
constexpr uint32_t kFieldsFormatVersion = 3;
constexpr uint32_t kMaxRank = 8;
constexpr uint32_t kMaxFields = 64, kMaxFieldName = 256;
// Version 3's label word: no labels at all (the fields are the targets).
constexpr int64_t kNoLabels = -1;

// Printable rendering of a magic that is not ours, for the error message.
std::string printable(const char* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    out += std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return out;
}

// Reads fixed-size little-endian values from the verified file image.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  bool read(T& out) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  size_t position() const { return pos_; }
  // Only after checking that n bytes are left.
  void skip(size_t n) { pos_ += n; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// A field's sizes must agree with the dataset's, or a reader would take one example's items for another's.
Status check_fields(const std::string& path, const Dataset& data) {
  for (const auto& f : data.fields) {
    const auto bad = [&](const std::string& what) {
      return Status::invalid_argument(fmt::format("{}: field '{}' {}", path, f.name, what));
    };
    if (f.name.empty() || f.name.size() > kMaxFieldName) return bad("has no name or one that is too long");
    if (f.examples() != data.size())
      return bad(fmt::format("has {} examples, the dataset {}", f.examples(), data.size()));
    if (f.width < 1 || (f.type == FieldType::text && f.width != 1)) return bad(fmt::format("has width {}", f.width));
    if (f.offsets.front() != 0) return bad("has offsets that do not start at 0");
    for (size_t i = 1; i < f.offsets.size(); ++i)
      if (f.offsets[i] < f.offsets[i - 1]) return bad("has decreasing offsets");
    const auto values = static_cast<size_t>(f.items() * f.width);
    const size_t held = f.type == FieldType::int64     ? f.ints.size()
                        : f.type == FieldType::float32 ? f.floats.size()
                                                       : f.texts.size();
    if (held != values) return bad(fmt::format("holds {} values for {} items of width {}", held, f.items(), f.width));
  }
  if (data.fields.size() > kMaxFields) {
    return Status::invalid_argument(fmt::format("{}: {} fields, at most {}", path, data.fields.size(), kMaxFields));
  }
  return Status::ok_status();
}

// Version 3's tail: uint32 field count, then per field uint32 name length, the name, uint32 type, int64 width,
// int64 offsets[count + 1] and the values (int64 or float32 items * width; text: uint32 length + bytes each).
std::string encode_fields(const std::vector<RaggedField>& fields) {
  std::string out;
  auto append = [&out](const auto& value) { out.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  append(static_cast<uint32_t>(fields.size()));
  for (const auto& f : fields) {
    append(static_cast<uint32_t>(f.name.size()));
    out += f.name;
    append(static_cast<uint32_t>(f.type));
    append(f.width);
    out.append(reinterpret_cast<const char*>(f.offsets.data()), f.offsets.size() * sizeof(int64_t));
    switch (f.type) {
      case FieldType::int64:
        out.append(reinterpret_cast<const char*>(f.ints.data()), f.ints.size() * sizeof(int64_t));
        break;
      case FieldType::float32:
        out.append(reinterpret_cast<const char*>(f.floats.data()), f.floats.size() * sizeof(float));
        break;
      case FieldType::text:
        for (const auto& text : f.texts) {
          append(static_cast<uint32_t>(text.size()));
          out += text;
        }
        break;
    }
  }
  return out;
}

}  // namespace

Result<ShardInfo> write_shard(const std::string& path, const Dataset& data) {
  const int64_t numel = data.sample_numel();
  if (data.features.size() != static_cast<size_t>(data.size() * numel)) {
    return Status::invalid_argument(fmt::format("{}: dataset has {} feature values, expected {} examples x {} = {}",
                                                path, data.features.size(), data.size(), numel, data.size() * numel));
  }
  std::string header(kMagic, sizeof(kMagic));
  auto append = [&header](const auto& value) { header.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  if (data.has_targets() && data.targets.size() != static_cast<size_t>(data.size() * data.target_width)) {
    return Status::invalid_argument(fmt::format("{}: dataset has {} target values, not a multiple of {}", path,
                                                data.targets.size(), data.target_width));
  }
  if (Status s = check_fields(path, data); !s.ok()) return s;
  // Class labels keep version 1, byte for byte as before targets existed; fields need version 3.
  const bool with_fields = !data.fields.empty();
  append(with_fields ? kFieldsFormatVersion : data.has_targets() ? kTargetsFormatVersion : kFormatVersion);
  append(static_cast<uint32_t>(data.sample_shape.size()));
  for (int64_t dim : data.sample_shape) append(dim);
  append(data.size());
  if (with_fields) {
    append(data.has_targets() ? data.target_width : data.labels.empty() ? kNoLabels : int64_t{0});
  } else if (data.has_targets()) {
    append(data.target_width);
  }

  AtomicFileWriter writer(path);
  if (Status s = writer.open(); !s.ok()) return s;
  Crc32 crc;
  auto put = [&](const void* p, size_t n) {
    crc.update(p, n);
    return writer.write(p, n);
  };
  if (Status s = put(header.data(), header.size()); !s.ok()) return s;
  if (Status s = put(data.features.data(), data.features.size() * sizeof(float)); !s.ok()) return s;
  if (data.has_targets()) {
    if (Status s = put(data.targets.data(), data.targets.size() * sizeof(float)); !s.ok()) return s;
  } else if (Status s = put(data.labels.data(), data.labels.size() * sizeof(int64_t)); !s.ok()) {
    return s;
  }
  if (with_fields) {
    const std::string tail = encode_fields(data.fields);
    if (Status s = put(tail.data(), tail.size()); !s.ok()) return s;
  }
  const size_t bytes = writer.bytes_written();
  if (Status s = writer.commit(); !s.ok()) return s;

  ShardInfo info;
  info.file = std::filesystem::path(path).filename().string();
  info.count = data.size();
  info.bytes = static_cast<int64_t>(bytes);
  info.checksum = crc.text();
  return info;
}

namespace {

// Where a verified shard's parts lie in its file image.
struct ShardLayout {
  std::vector<int64_t> sample_shape;
  int64_t count = 0;
  size_t features_offset = 0, labels_offset = 0;  // labels_offset: where the labels or the targets start
  int64_t target_width = 0;                       // version 2: float targets per example; 0 = class labels
  bool has_labels = true;                         // version 3 may hold neither labels nor targets
  size_t fields_offset = 0;                       // version 3: where the fields start
  bool has_fields = false;
};

Status checksum_matches(const std::string& path, std::string_view file, const std::string& expected_checksum) {
  const std::string actual = checksum_of(file);
  if (actual == expected_checksum) return Status::ok_status();
  return Status::corruption(fmt::format("{}: checksum {} does not match the manifest's {}", path, actual,
                                        expected_checksum.empty() ? "(none)" : expected_checksum));
}

// Parses the header of a file image whose checksum already matched, and checks that the sizes it announces
// are exactly the file's.
Result<ShardLayout> parse_layout(const std::string& path, std::string_view file) {
  auto truncated = [&](const std::string& what) {
    return Status::corruption(
        fmt::format("{}: truncated: the file ends ({} bytes) inside the {}", path, file.size(), what));
  };
  Cursor cursor(file);
  char magic[sizeof(kMagic)];
  if (file.size() < sizeof(kMagic)) return truncated("magic");
  std::memcpy(magic, file.data(), sizeof(kMagic));
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return Status::invalid_argument(
        fmt::format("{}: not a Cerebro shard (its first bytes are not '{}')", path, printable(kMagic, sizeof(kMagic))));
  }
  for (size_t i = 0; i < sizeof(kMagic); ++i) cursor.read(magic[i]);
  uint32_t version = 0, rank = 0;
  if (!cursor.read(version) || !cursor.read(rank)) return truncated("header");
  if (version != kFormatVersion && version != kTargetsFormatVersion && version != kFieldsFormatVersion) {
    return Status::invalid_argument(
        fmt::format("{}: shard format version {} is not supported (this build reads {} to {})", path, version,
                    kFormatVersion, kFieldsFormatVersion));
  }
  if (rank > kMaxRank)
    return Status::corruption(fmt::format("{}: corrupt header: sample rank {} exceeds {}", path, rank, kMaxRank));
  ShardLayout layout;
  layout.sample_shape.resize(rank);
  for (auto& dim : layout.sample_shape) {
    if (!cursor.read(dim)) return truncated("header");
    if (dim < 0) return Status::corruption(fmt::format("{}: corrupt header: negative dimension {}", path, dim));
  }
  int64_t count = 0;
  if (!cursor.read(count)) return truncated("header");
  if (count < 0) return Status::corruption(fmt::format("{}: corrupt header: negative example count {}", path, count));
  int64_t target_width = 0;
  if (version == kTargetsFormatVersion || version == kFieldsFormatVersion) {
    if (!cursor.read(target_width)) return truncated("header");
    const bool allowed = version == kFieldsFormatVersion ? target_width >= kNoLabels : target_width > 0;
    if (!allowed || target_width > 1'000'000) {
      return Status::corruption(fmt::format("{}: corrupt header: target width {}", path, target_width));
    }
  }
  layout.has_fields = version == kFieldsFormatVersion;
  layout.has_labels = target_width != kNoLabels;
  if (!layout.has_labels) target_width = 0;

  // Every size is checked against the file length before it is multiplied, so a corrupt header cannot
  // overflow its way past the length check.
  const uint64_t file_size = file.size(), available = file_size - cursor.position();
  uint64_t numel = rank == 0 ? 0 : 1;
  bool numel_exceeds_file = false;
  for (int64_t dim : layout.sample_shape) {
    const auto d = static_cast<uint64_t>(dim);
    if (d == 0) {
      numel = 0;
      numel_exceeds_file = false;
      break;
    }
    if (numel > file_size / d) numel_exceeds_file = true;
    if (!numel_exceeds_file) numel *= d;
  }
  const auto n = static_cast<uint64_t>(count);
  const uint64_t label_bytes = !layout.has_labels ? 0
                               : target_width > 0 ? static_cast<uint64_t>(target_width) * sizeof(float)
                                                  : sizeof(int64_t);
  const uint64_t per_example = numel * sizeof(float) + label_bytes;
  const bool fits = n == 0 || (!numel_exceeds_file && (per_example == 0 || n <= available / per_example));
  if (!fits) {
    return Status::corruption(
        fmt::format("{}: truncated: {} examples need more than the {} bytes in the file", path, count, file_size));
  }
  if (n * per_example < available && !layout.has_fields) {
    return Status::corruption(fmt::format("{}: corrupt: {} unexpected bytes after the {} examples", path,
                                          available - n * per_example, count));
  }
  layout.count = count;
  layout.features_offset = cursor.position();
  layout.labels_offset = layout.features_offset + static_cast<size_t>(n * numel) * sizeof(float);
  layout.target_width = target_width;
  layout.fields_offset = layout.labels_offset + static_cast<size_t>(n * label_bytes);
  return layout;
}

// Version 3's fields, copied out of the verified file image; every size is checked against what is left
// before it is used.
Result<std::vector<RaggedField>> parse_fields(const std::string& path, std::string_view file,
                                              const ShardLayout& layout) {
  const std::string_view tail = file.substr(layout.fields_offset);
  Cursor cursor(tail);
  auto corrupt = [&](const std::string& what) {
    return Status::corruption(fmt::format("{}: corrupt fields: {}", path, what));
  };
  auto left = [&]() { return static_cast<uint64_t>(tail.size() - cursor.position()); };
  uint32_t field_count = 0;
  if (!cursor.read(field_count)) return corrupt("the field count is missing");
  if (field_count > kMaxFields) return corrupt(fmt::format("{} fields, at most {}", field_count, kMaxFields));
  const auto n = static_cast<uint64_t>(layout.count);
  std::vector<RaggedField> fields(field_count);
  for (auto& f : fields) {
    uint32_t name_size = 0, type = 0;
    if (!cursor.read(name_size) || name_size == 0 || name_size > kMaxFieldName || left() < name_size)
      return corrupt("a field name is missing or too long");
    f.name.assign(tail.data() + cursor.position(), name_size);
    cursor.skip(name_size);
    if (!cursor.read(type) || type > static_cast<uint32_t>(FieldType::text))
      return corrupt(fmt::format("field '{}' has an unknown type", f.name));
    f.type = static_cast<FieldType>(type);
    if (!cursor.read(f.width) || f.width < 1 || f.width > 1'000'000 || (f.type == FieldType::text && f.width != 1))
      return corrupt(fmt::format("field '{}' has a bad width", f.name));
    if (left() / sizeof(int64_t) < n + 1) return corrupt(fmt::format("field '{}' ends inside its offsets", f.name));
    f.offsets.resize(static_cast<size_t>(n + 1));
    for (auto& offset : f.offsets) cursor.read(offset);
    if (f.offsets.front() != 0) return corrupt(fmt::format("field '{}' offsets do not start at 0", f.name));
    for (size_t i = 1; i < f.offsets.size(); ++i)
      if (f.offsets[i] < f.offsets[i - 1]) return corrupt(fmt::format("field '{}' has decreasing offsets", f.name));
    const auto items = static_cast<uint64_t>(f.offsets.back());
    const auto width = static_cast<uint64_t>(f.width);
    const size_t value_size = f.type == FieldType::float32 ? sizeof(float) : sizeof(int64_t);
    if (f.type != FieldType::text) {
      if (items > left() / value_size / width) return corrupt(fmt::format("field '{}' ends inside its values", f.name));
      const auto values = static_cast<size_t>(items * width);
      void* into = nullptr;
      if (f.type == FieldType::int64) {
        f.ints.resize(values);
        into = f.ints.data();
      } else {
        f.floats.resize(values);
        into = f.floats.data();
      }
      std::memcpy(into, tail.data() + cursor.position(), values * value_size);
      cursor.skip(values * value_size);
      continue;
    }
    if (items > left() / sizeof(uint32_t)) return corrupt(fmt::format("field '{}' ends inside its texts", f.name));
    f.texts.resize(static_cast<size_t>(items));
    for (auto& text : f.texts) {
      uint32_t size = 0;
      if (!cursor.read(size) || left() < size) return corrupt(fmt::format("field '{}' ends inside a text", f.name));
      text.assign(tail.data() + cursor.position(), size);
      cursor.skip(size);
    }
  }
  if (left() != 0) return corrupt(fmt::format("{} unexpected bytes after the last field", left()));
  if (fields.empty() && !layout.has_labels) return corrupt("neither labels nor fields");
  return fields;
}

// Class labels (version 1) or float targets (version 2), whichever the shard holds; both lie after the
// features, at labels_offset.
void copy_labels(Dataset& data, std::string_view file, const ShardLayout& layout) {
  if (!layout.has_labels) return;
  if (layout.target_width > 0) {
    data.target_width = layout.target_width;
    data.targets.resize(static_cast<size_t>(layout.count) * static_cast<size_t>(layout.target_width));
    std::memcpy(data.targets.data(), file.data() + layout.labels_offset, data.targets.size() * sizeof(float));
    return;
  }
  data.labels.resize(static_cast<size_t>(layout.count));
  std::memcpy(data.labels.data(), file.data() + layout.labels_offset,
              static_cast<size_t>(layout.count) * sizeof(int64_t));
}

// A read-only mapping of a whole file, unmapped when the last Dataset using it goes.
class MappedFile {
 public:
  MappedFile(void* base, size_t bytes) : base_(base), bytes_(bytes) {}
  ~MappedFile() {
    if (base_) ::munmap(base_, bytes_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(base_), bytes_}; }

 private:
  void* base_;
  size_t bytes_;
};

Result<std::shared_ptr<MappedFile>> map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(path + ": no such file");
    return Status::io_error(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::invalid_argument(path + ": not a regular file");
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  if (bytes == 0) {
    ::close(fd);
    return Status::corruption(path + ": truncated: the file is empty");
  }
  // MAP_SHARED of a file we never write: its pages are the page cache's, counted as file-backed memory that
  // the kernel may drop and read again, never as this process's anonymous memory.
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) return Status::io_error(fmt::format("{}: cannot map: {}", path, std::strerror(err)));
  return std::make_shared<MappedFile>(base, bytes);
}

}  // namespace

Result<Dataset> read_shard(const std::string& path, const std::string& expected_checksum) {
  // Verified through a mapping, then the features copied out: the only anonymous memory is the result.
  auto mapped = map_shard(path, expected_checksum);
  if (!mapped) return mapped.status();
  Dataset data = std::move(*mapped);
  const size_t feature_count = static_cast<size_t>(data.size() * data.sample_numel());
  data.features.assign(data.mapped_features, data.mapped_features + feature_count);
  data.mapped_features = nullptr;
  data.feature_storage.reset();  // unmapped
  return data;
}

Result<std::string> file_checksum(const std::string& path) {
  // Through a mapping: a large shard is checked without a copy in anonymous memory.
  auto mapped = map_file(path);
  if (!mapped) {
    if (mapped.status().is_corruption()) return checksum_of("");  // an empty file
    return mapped.status();
  }
  return checksum_of((*mapped)->bytes());
}

Result<Dataset> map_shard(const std::string& path, const std::string& expected_checksum) {
  auto mapped = map_file(path);
  if (!mapped) return mapped.status();
  const std::string_view file = (*mapped)->bytes();
  // No MADV_SEQUENTIAL for the checksum pass: it lets the kernel drop pages right behind the reader, and
  // training reads them all again next (in a shuffled order).
  if (Status s = checksum_matches(path, file, expected_checksum); !s.ok()) return s;
  auto layout = parse_layout(path, file);
  if (!layout) return layout.status();
  Dataset data;
  data.sample_shape = layout->sample_shape;
  copy_labels(data, file, *layout);  // labels or targets: small, and not always aligned in the file: copied
  if (layout->has_fields) {
    auto fields = parse_fields(path, file, *layout);
    if (!fields) return fields.status();
    data.fields = std::move(*fields);
  }
  // Features start after a header of 24 + 8 * rank bytes (8 more with targets): aligned for floats.
  data.mapped_features = reinterpret_cast<const float*>(file.data() + layout->features_offset);
  data.feature_storage = std::move(*mapped);
  return data;
}

}  // namespace cerebro::datasets
