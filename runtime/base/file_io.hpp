#pragma once
// The project's one way to read a whole file and to write one: whole-file reads with clear errors, and
// atomic writes (temporary file, fsync, rename, fsync of the directory) so a crash never leaves a
// half-written file behind. Every file a run must find again after a crash is written this way.
// Errors name the path; their codes: not_found (no such file), invalid_argument (a directory where a
// file was expected), io_error (the OS could not open, read or write).

#include <cstddef>
#include <string>

#include "runtime/base/status.hpp"

namespace cerebro {

// The whole file as bytes.
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

}  // namespace cerebro
