#include "runtime/base/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace cerebro {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string parent_or_dot(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// A missing file is not_found; any other reason (permissions, I/O) io_error.
Status open_failed(const std::string& path) {
  const bool missing = errno == ENOENT || errno == ENOTDIR;
  auto message = path + ": cannot open: " + errno_text();
  return missing ? Status::not_found(std::move(message)) : Status::io_error(std::move(message));
}

}  // namespace

Result<std::string> read_whole_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return open_failed(path);
  if (S_ISDIR(st.st_mode)) return Status::invalid_argument(path + ": is a directory, expected a file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return open_failed(path);
  std::string contents;
  contents.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t got = ::read(fd, contents.data() + done, contents.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const std::string why = errno_text();
      ::close(fd);
      return Status::io_error(path + ": read failed: " + why);
    }
    if (got == 0) break;  // the file shrank while we read it; report what we have
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  contents.resize(done);
  return contents;
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), tmp_path_(path_ + ".tmp") {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

Status AtomicFileWriter::open() {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::io_error(tmp_path_ + ": cannot create: " + errno_text());
  return Status::ok_status();
}

Status AtomicFileWriter::write(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::write(fd_, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return Status::io_error(tmp_path_ + ": write failed: " + errno_text());
    p += put;
    bytes -= static_cast<size_t>(put);
    bytes_written_ += static_cast<size_t>(put);
  }
  return Status::ok_status();
}

Status AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) return Status::io_error(tmp_path_ + ": fsync failed: " + errno_text());
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Status::io_error(tmp_path_ + ": close failed: " + errno_text());
  }
  fd_ = -1;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    return Status::io_error(path_ + ": cannot rename " + tmp_path_ + " into place: " + errno_text());
  }
  committed_ = true;
  return fsync_directory(parent_or_dot(path_));
}

Status write_file_atomically(const std::string& path, const std::string& contents) {
  AtomicFileWriter writer(path);
  if (Status s = writer.open(); !s.ok()) return s;
  if (Status s = writer.write(contents.data(), contents.size()); !s.ok()) return s;
  return writer.commit();
}

Status fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::io_error(dir + ": cannot open directory to fsync: " + errno_text());
  const int rc = ::fsync(fd);
  const std::string why = rc != 0 ? errno_text() : "";
  ::close(fd);
  if (rc != 0) return Status::io_error(dir + ": fsync of directory failed: " + why);
  return Status::ok_status();
}

}  // namespace cerebro
