#include "datasets/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace cerebro::datasets {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // uint8 data, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // uint8 data, 1 dimension
constexpr unsigned kGzBufferBytes = 1u << 20;  // large zlib buffer: inflating in big steps is what makes it fast
constexpr size_t kReadChunkBytes = 4u << 20;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

Result<GzFile> open_gz(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::not_found(path + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    return Status::invalid_argument(path + ": is a directory, expected a file");
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) return Status::io_error(path + ": cannot open for reading");
  gzbuffer(f.get(), kGzBufferBytes);
  return f;
}

// Reads up to `bytes` bytes, in chunks because gzread takes an unsigned int length.
Result<size_t> read_up_to(gzFile f, const std::string& path, void* out, size_t bytes) {
  size_t done = 0;
  auto* p = static_cast<char*>(out);
  while (done < bytes) {
    const auto step = static_cast<unsigned>(std::min<size_t>(bytes - done, INT_MAX));
    const int got = gzread(f, p + done, step);
    if (got < 0) {
      int errnum = 0;
      const char* why = gzerror(f, &errnum);
      return Status::io_error(path + ": read failed: " + (why ? why : "unknown zlib error"));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

struct IdxHeader {
  std::vector<uint32_t> dims;
};

// Reads the magic (checked against `expected`) and the big-endian dimension sizes it announces.
Result<IdxHeader> read_header(gzFile f, const std::string& path, uint32_t expected, const char* what) {
  unsigned char magic_bytes[4];
  auto got = read_up_to(f, path, magic_bytes, 4);
  if (!got) return got.status();
  if (*got < 4)
    return Status::invalid_argument(
        fmt::format("{}: truncated: expected a 4-byte IDX magic, got {} bytes", path, *got));
  const uint32_t magic = (uint32_t{magic_bytes[0]} << 24) | (uint32_t{magic_bytes[1]} << 16) |
                         (uint32_t{magic_bytes[2]} << 8) | uint32_t{magic_bytes[3]};
  if (magic != expected) {
    return Status::invalid_argument(
        fmt::format("{}: not an IDX file of {}: its magic number is not 0x{:08x}", path, what, expected));
  }
  IdxHeader header;
  const unsigned ndims = expected & 0xff;
  std::vector<unsigned char> raw(4 * ndims);
  got = read_up_to(f, path, raw.data(), raw.size());
  if (!got) return got.status();
  if (*got < raw.size()) {
    return Status::invalid_argument(
        fmt::format("{}: truncated: expected {} bytes of header dimensions, got {}", path, raw.size(), *got));
  }
  for (unsigned d = 0; d < ndims; ++d) {
    const unsigned char* b = raw.data() + 4 * d;
    header.dims.push_back((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]});
  }
  return header;
}

// Streams `expected_bytes` uint8 values through a fixed buffer, handing each chunk to `sink`; a corrupt
// header announcing absurd sizes therefore fails as truncation instead of a giant allocation.
template <class Sink>
Status read_payload(gzFile f, const std::string& path, size_t expected_bytes, const char* what, Sink sink) {
  std::vector<unsigned char> chunk(std::min(expected_bytes, kReadChunkBytes));
  size_t total = 0;
  while (total < expected_bytes) {
    const size_t want = std::min(chunk.size(), expected_bytes - total);
    auto got = read_up_to(f, path, chunk.data(), want);
    if (!got) return got.status();
    sink(chunk.data(), *got);
    total += *got;
    if (*got < want) {
      return Status::invalid_argument(
          fmt::format("{}: truncated: expected {} bytes of {}, got {}", path, expected_bytes, what, total));
    }
  }
  return Status::ok_status();
}

}  // namespace

Result<Dataset> load_idx(const std::string& images_path, const std::string& labels_path) {
  auto images = open_gz(images_path);
  if (!images) return images.status();
  auto labels = open_gz(labels_path);
  if (!labels) return labels.status();

  auto image_header = read_header(images->get(), images_path, kImagesMagic, "images");
  if (!image_header) return image_header.status();
  auto label_header = read_header(labels->get(), labels_path, kLabelsMagic, "labels");
  if (!label_header) return label_header.status();

  const uint64_t n = image_header->dims[0], rows = image_header->dims[1], cols = image_header->dims[2];
  const uint64_t n_labels = label_header->dims[0];
  if (n != n_labels) {
    return Status::invalid_argument(
        fmt::format("{}: has {} images but {} has {} labels", images_path, n, labels_path, n_labels));
  }
  if (n == 0) return Status::invalid_argument(images_path + ": contains zero examples");
  if (rows == 0 || cols == 0) {
    return Status::invalid_argument(fmt::format("{}: images have an empty shape {}x{}", images_path, rows, cols));
  }

  Dataset data;
  data.sample_shape = {1, static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
  const size_t pixel_bytes = static_cast<size_t>(n * rows * cols);
  // Reserve at most what a plausible file holds; a lying header then fails as truncation, not bad_alloc.
  data.features.reserve(std::min<size_t>(pixel_bytes, size_t{1} << 30));
  // A table gives the correctly rounded p / 255 for every byte at lookup speed.
  float scaled[256];
  for (int v = 0; v < 256; ++v) scaled[v] = static_cast<float>(v) / 255.0f;
  Status s =
      read_payload(images->get(), images_path, pixel_bytes, "pixel data", [&](const unsigned char* p, size_t count) {
        const size_t start = data.features.size();
        data.features.resize(start + count);
        float* out = data.features.data() + start;
        for (size_t i = 0; i < count; ++i) out[i] = scaled[p[i]];
      });
  if (!s.ok()) return s;

  data.labels.reserve(static_cast<size_t>(n));
  s = read_payload(labels->get(), labels_path, static_cast<size_t>(n), "label data",
                   [&](const unsigned char* p, size_t count) { data.labels.insert(data.labels.end(), p, p + count); });
  if (!s.ok()) return s;
  return data;
}

Result<IdxFiles> find_idx_files(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Status::not_found(dir + ": no such directory");
  auto find = [&](const std::string& base, std::string& out) -> Status {
    for (const std::string& name : {base, base + ".gz"}) {
      const auto candidate = std::filesystem::path(dir) / name;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        out = candidate.string();
        return Status::ok_status();
      }
    }
    return Status::not_found(dir + ": cannot find " + base + " or " + base + ".gz");
  };
  IdxFiles files;
  for (auto [base, out] : {std::pair<const char*, std::string*>{"train-images-idx3-ubyte", &files.train_images},
                           {"train-labels-idx1-ubyte", &files.train_labels},
                           {"t10k-images-idx3-ubyte", &files.test_images},
                           {"t10k-labels-idx1-ubyte", &files.test_labels}}) {
    if (Status s = find(base, *out); !s.ok()) return s;
  }
  return files;
}

}  // namespace cerebro::datasets
