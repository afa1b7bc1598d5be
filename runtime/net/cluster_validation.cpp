#include "runtime/net/cluster_validation.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"

namespace cerebro {

Status validate_run_file_path(const std::string& path) {
  if (path.empty() || path.size() > 256)
    return Status::invalid_argument("a run file path must have 1 to 256 characters");
  size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    auto part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (auto s = validate_name("run file path component", part); !s.ok()) return s;
    if (slash == std::string::npos) return Status::ok_status();
    start = slash + 1;
  }
}

Status validate_placement(const shard_placement& p) {
  if (auto s = validate_name("experiment", p.experiment); !s.ok()) return s;
  if (auto s = validate_name("shard file", p.file); !s.ok()) return s;
  if (p.partition < -1) return Status::invalid_argument(fmt::format("bad partition id {}", p.partition));
  if (p.bytes <= 0 || p.bytes > (int64_t{1} << 40))
    return Status::invalid_argument(fmt::format("bad shard size {}", p.bytes));
  if (p.checksum.rfind("crc32:", 0) != 0 || p.checksum.size() != 14)
    return Status::invalid_argument(fmt::format("bad checksum \"{}\"", p.checksum));
  return Status::ok_status();
}

Result<std::string> read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::not_found(fmt::format("token file {} does not exist", path));
  if (st.st_mode & 077)
    return Status::failed_precondition(fmt::format("token file {} is readable by others: chmod 600 it", path));
  auto text = read_whole_file(path);
  if (!text.ok()) return text.status().with_context(fmt::format("token file {} is unreadable", path));
  auto line = text->substr(0, text->find('\n'));  // the token is the first line
  auto b = line.find_first_not_of(" \t\r");
  auto e = line.find_last_not_of(" \t\r");
  if (b == std::string::npos) return Status::invalid_argument(fmt::format("token file {} is empty", path));
  auto token = line.substr(b, e - b + 1);
  if (token.size() < 16)
    return Status::invalid_argument(fmt::format("the token in {} is too short: use at least 16 characters", path));
  return token;
}

}  // namespace cerebro
