#pragma once
// IDX files (the MNIST / Fashion-MNIST format): big-endian header, then raw uint8 data.

#include <string>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

// Reads an IDX images file (magic 0x00000803, uint8, dims N x R x C) and labels file (0x00000801,
// uint8, N), gzipped or plain (zlib reads both transparently). Pixels scaled to [0,1], sample_shape
// {1, R, C}. Errors name the file: missing/unreadable file, wrong magic (found vs expected), truncated
// (expected N bytes of pixel data, got M), image/label count mismatch, zero examples.
Result<Dataset> load_idx(const std::string& images_path, const std::string& labels_path);

struct IdxFiles {
  std::string train_images, train_labels, test_images, test_labels;
};

// Finds {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] in `dir` (MNIST/Fashion-MNIST layout); the plain
// file wins when both exist. The error names the directory and the file it could not find.
Result<IdxFiles> find_idx_files(const std::string& dir);

}  // namespace cerebro::datasets
