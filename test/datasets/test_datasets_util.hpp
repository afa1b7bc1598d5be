#pragma once
// Helpers shared by the datasets tests: a self-removing temporary directory and writers for small
// synthetic IDX and CSV files.

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include "test/support/temp_dir.hpp"

namespace cerebro::datasets::testing {

using cerebro::testing::TempDir;

inline void put_be32(std::vector<unsigned char>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
}

// Writes raw bytes through zlib: gzipped, or plain ("wbT": zlib's transparent, uncompressed mode).
inline void write_gz(const std::string& path, const std::vector<unsigned char>& bytes, bool gzipped) {
  gzFile f = gzopen(path.c_str(), gzipped ? "wb" : "wbT");
  if (!f) throw std::runtime_error("cannot create " + path);
  if (!bytes.empty() &&
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size())) {
    gzclose(f);
    throw std::runtime_error("cannot write " + path);
  }
  gzclose(f);
}

// IDX images: n x rows x cols; pixel (i, p) = (i * 7 + p) % 256 unless `pixels` is given.
inline std::vector<unsigned char> idx_images_bytes(uint32_t n, uint32_t rows, uint32_t cols,
                                                   uint32_t magic = 0x00000803) {
  std::vector<unsigned char> out;
  put_be32(out, magic);
  put_be32(out, n);
  put_be32(out, rows);
  put_be32(out, cols);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t p = 0; p < rows * cols; ++p) out.push_back(static_cast<unsigned char>((i * 7 + p) % 256));
  }
  return out;
}

// IDX labels: label i = i % 10.
inline std::vector<unsigned char> idx_labels_bytes(uint32_t n, uint32_t magic = 0x00000801) {
  std::vector<unsigned char> out;
  put_be32(out, magic);
  put_be32(out, n);
  for (uint32_t i = 0; i < n; ++i) out.push_back(static_cast<unsigned char>(i % 10));
  return out;
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

// True when `text` contains `part`: for messages, with the whole message in the failure report.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace cerebro::datasets::testing
