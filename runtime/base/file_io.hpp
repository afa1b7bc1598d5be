#pragma once
// Small POSIX file helpers shared by the shard, manifest and ETL code: whole-file reads with clear errors,
// and atomic writes (temporary file, fsync, rename) so a crash never leaves a half-written file behind.

#include <cstddef>
#include <string>

#include "runtime/base/status.hpp"

namespace cerebro::datasets {

// The whole file as bytes. Errors name the path: missing file, directory, read failure.
Result<std::string> read_whole_file(const std::string& path);

// Writes into path + ".tmp", fsyncs, renames over `path` and fsyncs the directory.
// Until commit() succeeds nothing appears at `path`; the destructor removes an uncommitted temporary.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  Status open();
  Status write(const void* data, size_t bytes);
  Status commit();
  size_t bytes_written() const { return bytes_written_; }

 private:
  std::string path_, tmp_path_;
  int fd_ = -1;
  size_t bytes_written_ = 0;
  bool committed_ = false;
};

Status write_file_atomically(const std::string& path, const std::string& contents);

// fsync on a directory makes a rename inside it durable.
Status fsync_directory(const std::string& dir);

}  // namespace cerebro::datasets
