#pragma once
// Binary partition shards: one file per partition (and for validation and test), checksummed so a worker
// never trains on a corrupted or truncated copy.
//
// Layout, all little-endian:
//   char[8]  magic "CRBSHRD1"
//   uint32   format version (1)
//   uint32   rank of one sample's shape
//   int64    dims[rank]
//   int64    count (examples)
//   float32  features[count * product(dims)]
//   int64    labels[count]
// Version 2 (regression and multilabel targets) adds `int64 target_width` after count and holds
//   float32  targets[count * target_width]
// instead of the labels.
// Version 3 (structured examples: captions, boxes, token windows) has the int64 label word of version 2
// (-1: no labels, 0: class labels, > 0: the target width), then the features, the labels or targets if
// any, and the ragged fields (datasets/dataset.hpp RaggedField):
//   uint32   field count
//   per field: uint32 name length, name, uint32 type (0 int64, 1 float32, 2 text), int64 width,
//              int64 offsets[count + 1], then the values: items * width int64 or float32, or per text
//              item a uint32 length and its bytes
// A dataset without fields is written as version 1 or 2, byte for byte as before fields existed.

#include <cstdint>
#include <string>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

struct ShardInfo {
  std::string file;      // file name only, relative to the manifest's directory
  int64_t count = 0;     // examples
  int64_t bytes = 0;     // file size
  std::string checksum;  // "crc32:xxxxxxxx" of the whole file
};

// Written to path + ".tmp", fsync'd, then renamed: never half-written. info.file = file name only.
Result<ShardInfo> write_shard(const std::string& path, const Dataset& data);

// Reads and verifies the checksum BEFORE trusting the contents. Errors name the file: missing file,
// checksum mismatch ("part-0001.bin: checksum crc32:... does not match the manifest's crc32:..."),
// bad magic, unsupported version, truncation.
Result<Dataset> read_shard(const std::string& path, const std::string& expected_checksum);

// Out of core: maps the file read-only and verifies its checksum through the mapping; the Dataset's
// features stay in the file (Dataset::mapped_features), only the labels are copied. Same errors as
// read_shard. The mapping lives as long as any copy of the Dataset.
Result<Dataset> map_shard(const std::string& path, const std::string& expected_checksum);

// "crc32:xxxxxxxx" of a whole file (the checksum write_shard reports).
Result<std::string> file_checksum(const std::string& path);

}  // namespace cerebro::datasets
