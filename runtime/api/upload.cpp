#include "runtime/api/upload.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/api/api_auth.hpp"

namespace fs = std::filesystem;

namespace cerebro::api {

Status check_upload_name(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Status::invalid_argument(fmt::format("file \"{}\": {}", name.substr(0, 80), why));
  };
  if (name.empty()) return bad("a file needs a name: the relative path the spec names it with");
  if (name.size() > 255) return bad("the name is longer than 255 characters");
  if (name.front() == '/') return bad("the name must be a relative path (the spec names it relative to itself)");
  int depth = 0;
  size_t begin = 0;
  while (begin <= name.size()) {
    auto end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    const auto part = name.substr(begin, end - begin);
    // Empty, "." and "..": a part of dots alone names no file of its own.
    if (part.find_first_not_of('.') == std::string::npos)
      return bad("each part of the path must be a name (not empty, \".\" or \"..\")");
    for (char c : part)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+'))
        return bad(fmt::format("'{}' is not allowed in a name (letters, digits and . _ - +)", c));
    if (++depth > 8) return bad("the path is more than 8 folders deep");
    begin = end + 1;
  }
  return Status::ok_status();
}

Result<std::unique_ptr<Upload>> Upload::create(const std::string& root, size_t max_bytes, FormKind kind) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::io_error(fmt::format("cannot create the upload area: {}", ec.message()));
  const auto dir = (fs::path(root) / random_token(8)).string();
  if (!fs::create_directory(dir, ec) || ec)
    return Status::io_error(fmt::format("cannot create an upload directory: {}", ec ? ec.message() : "it exists"));
  return std::unique_ptr<Upload>(new Upload(dir, max_bytes, kind));
}

Upload::~Upload() {
  if (file_) std::fclose(file_);
}

Status Upload::begin_file(const std::string& name) {
  if (auto st = finish(); !st.ok()) return st;
  if (auto st = check_upload_name(name); !st.ok()) return st;
  for (const auto& kept : names_)
    if (kept == name) return Status::invalid_argument(fmt::format("file \"{}\" is sent twice", name));
  if (names_.size() >= kMaxUploadFiles)
    return Status::invalid_argument(fmt::format("a {} brings at most {} files", what(), kMaxUploadFiles));
  const auto path = fs::path(dir_) / name;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::io_error(fmt::format("file \"{}\": cannot create its folder: {}", name, ec.message()));
  // A name that is the folder of another file (a, then a/b) cannot be both.
  if (fs::exists(path, ec)) return Status::invalid_argument(fmt::format("file \"{}\" clashes with another", name));
  file_ = std::fopen(path.string().c_str(), "wb");
  if (!file_) return Status::io_error(fmt::format("file \"{}\": cannot be written", name));
  names_.push_back(name);
  return Status::ok_status();
}

Status Upload::count(size_t size) {
  if (size > max_bytes_ - std::min(bytes_, max_bytes_)) {
    over_cap_ = true;
    return Status::invalid_argument(fmt::format("the {} is larger than {} bytes (its {} and files)", what(), max_bytes_,
                                                kind_ == FormKind::submission ? "spec" : "description"));
  }
  bytes_ += size;
  return Status::ok_status();
}

Status Upload::write(const char* data, size_t size) {
  if (!file_) return Status::internal("no file begun");
  if (auto st = count(size); !st.ok()) return st;
  if (std::fwrite(data, 1, size, file_) != size)
    return Status::io_error(fmt::format("file \"{}\": cannot be written whole", names_.back()));
  return Status::ok_status();
}

Status Upload::finish() {
  if (!file_) return Status::ok_status();
  const bool written = std::fflush(file_) == 0 && std::fclose(file_) == 0;
  file_ = nullptr;
  if (!written) return Status::io_error(fmt::format("file \"{}\": cannot be written whole", names_.back()));
  return Status::ok_status();
}

Status Upload::begin_part(const std::string& name, const std::string& filename) {
  const auto text_part = kind_ == FormKind::submission ? SubmissionPart::spec : SubmissionPart::dataset;
  const char* text_name =
      kind_ == FormKind::submission ? "\"spec\" (the TOML spec)" : "\"dataset\" ({\"name\", \"data\"})";
  auto part = parse_submission_part(name);
  if (!part || (*part != text_part && *part != SubmissionPart::file))
    return Status::invalid_argument(
        fmt::format("a {}'s form has a part {} and parts \"file\"; got \"{}\"", what(), text_name, name.substr(0, 40)));
  in_spec_ = *part == text_part;
  if (in_spec_) return finish();
  return begin_file(filename);
}

Status Upload::receive(const char* data, size_t size) {
  if (!in_spec_) return write(data, size);
  if (spec_.size() + size > kMaxBodyBytes) {
    over_cap_ = true;
    return Status::invalid_argument(fmt::format("the {} is larger than {} bytes",
                                                kind_ == FormKind::submission ? "spec" : "description", kMaxBodyBytes));
  }
  if (auto st = count(size); !st.ok()) return st;
  spec_.append(data, size);
  return Status::ok_status();
}

Result<std::string> Upload::finish_form() {
  if (auto st = finish(); !st.ok()) return st;
  if (spec_.empty())
    return Status::invalid_argument(kind_ == FormKind::submission
                                        ? "the submission's form has no part \"spec\" (the TOML spec)"
                                        : "the dataset's form has no part \"dataset\" ({\"name\", \"data\"})");
  return spec_;
}

void Upload::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace cerebro::api
