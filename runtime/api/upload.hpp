#pragma once
// The files a submission brings (docs/API.md, "POST /api/v1/experiments"): each is written, as it
// arrives, under a directory of its own in the server's upload area, by the relative path the spec names
// it with, so a spec's relative paths find them and the experiment keeps them (a coordinator restart or a
// resume reads them again). Names are checked before anything is written: a name can never reach a file
// outside the directory. The bytes of one submission are capped.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runtime/api/api_request.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::api {

// The largest submission with files by default (the coordinator's --upload-max-mb): its spec and files.
constexpr size_t kDefaultUploadMaxBytes = size_t{256} << 20;
// At most this many files in one submission.
constexpr size_t kMaxUploadFiles = 256;

// A relative path of a brought file: components of letters, digits and ". _ - +", none "." or "..", no
// more than 8 deep, at most 255 characters; an error says what is wrong with it.
Status check_upload_name(const std::string& name);

// What a form uploads: a submission (its text part is `spec`) or a dataset (docs/API.md "Datasets": its
// text part is `dataset`, {"name", "data"} as JSON).
enum class FormKind { submission, dataset };

class Upload {
 public:
  // A new directory under `root` (created if needed), named at random; `max_bytes` caps the whole upload.
  static Result<std::unique_ptr<Upload>> create(const std::string& root, size_t max_bytes,
                                                FormKind kind = FormKind::submission);
  ~Upload();

  // Starts the next file (the previous one is closed).
  Status begin_file(const std::string& name);
  // Appends to the current file; past the cap, an error (and nothing more is written).
  Status write(const char* data, size_t size);
  // Counts bytes kept elsewhere (the spec's text) against the cap.
  Status count(size_t size);
  // Closes the current file; an error if it could not be written whole.
  Status finish();
  // Removes the directory and what is in it (a submission that was refused keeps nothing).
  void discard();

  // The multipart form, part by part as it arrives: its text part (`spec`, the TOML text, or `dataset`;
  // at most kMaxBodyBytes) and parts `file`, each written as its filename says. An error stops the form.
  Status begin_part(const std::string& name, const std::string& filename);
  Status receive(const char* data, size_t size);
  // The form is whole: the last file closed and its text part, or why the form is refused.
  Result<std::string> finish_form();

  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& names() const { return names_; }
  size_t bytes() const { return bytes_; }
  size_t max_bytes() const { return max_bytes_; }
  bool over_cap() const { return over_cap_; }  // refused for its size (HTTP 413)

 private:
  Upload(std::string dir, size_t max_bytes, FormKind kind) : dir_(std::move(dir)), max_bytes_(max_bytes), kind_(kind) {}
  const char* what() const { return kind_ == FormKind::submission ? "submission" : "dataset"; }
  std::string dir_;
  size_t max_bytes_;
  FormKind kind_;
  size_t bytes_ = 0;
  bool over_cap_ = false;
  bool in_spec_ = false;  // the part arriving is the spec
  std::string spec_;
  std::vector<std::string> names_;
  std::FILE* file_ = nullptr;
};

}  // namespace cerebro::api
