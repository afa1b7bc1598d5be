#include "datasets/text_source.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

namespace fs = std::filesystem;

namespace {

struct TextFiles {
  std::vector<std::string> read;
  std::vector<std::string> skipped;  // binary files and repeated links, for the progress line
};

Result<TextFiles> list_text_files(const std::string& path) {
  std::error_code ec;
  TextFiles out;
  if (fs::is_regular_file(path, ec)) {
    out.read.push_back(path);
    return out;
  }
  if (!fs::is_directory(path, ec)) return Status::not_found(fmt::format("text: {}: no such file or folder", path));
  std::vector<std::string> found;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) found.push_back(it->path().string());
  }
  if (ec) return Status::io_error(fmt::format("text: cannot list {}: {}", path, ec.message()));
  std::sort(found.begin(), found.end());
  std::set<std::string> seen;  // canonical paths: a link and its target are one file
  for (const std::string& f : found) {
    const std::string canonical = fs::weakly_canonical(f, ec).string();
    if (!seen.insert(ec ? f : canonical).second) {
      out.skipped.push_back(f);
      continue;
    }
    out.read.push_back(f);
  }
  return out;
}

}  // namespace

Result<Dataset> load_text_source(const TextSourceOptions& o, const std::function<void(const std::string&)>& progress) {
  if (o.window < 2) return Status::invalid_argument(fmt::format("text: window {} is below 2", o.window));
  auto files = list_text_files(o.path);
  if (!files) return files.status();
  const bool one_file = files->read.size() == 1 && files->skipped.empty() && fs::is_regular_file(o.path);

  Dataset d;
  d.sample_shape = {o.window};
  RaggedField windows{kTextPiecesField, FieldType::text};
  int64_t pieces = 0, used_files = 0;
  for (const std::string& file : files->read) {
    auto text = read_whole_file(file);
    if (!text) return text.status();
    if (text->find('\0') != std::string::npos) {
      if (one_file) return Status::invalid_argument(fmt::format("text: {} holds NUL bytes: not a text file", file));
      files->skipped.push_back(file);
      continue;
    }
    std::vector<std::string> all = split_pieces(o.tokenizer, *text);
    if (all.empty()) continue;
    ++used_files;
    pieces += static_cast<int64_t>(all.size());
    const auto window = static_cast<size_t>(o.window);
    for (size_t begin = 0; begin < all.size(); begin += window) {
      const size_t end = std::min(all.size(), begin + window);
      windows.append_texts(
          std::vector<std::string>(std::make_move_iterator(all.begin() + static_cast<ptrdiff_t>(begin)),
                                   std::make_move_iterator(all.begin() + static_cast<ptrdiff_t>(end))));
    }
  }
  if (windows.examples() == 0) return Status::invalid_argument(fmt::format("text: {} holds no text", o.path));
  if (progress) {
    std::string skipped;
    if (!files->skipped.empty()) {
      const size_t shown = std::min<size_t>(files->skipped.size(), 3);
      std::vector<std::string> names;
      for (size_t i = 0; i < shown; ++i) names.push_back(fs::path(files->skipped[i]).filename().string());
      skipped = fmt::format(", skipped {} binary or repeated files ({}{})", files->skipped.size(),
                            fmt::join(names, ", "), files->skipped.size() > shown ? ", ..." : "");
    }
    progress(fmt::format("text: {} {} pieces from {} files in {} windows of {}{}", pieces, to_string(o.tokenizer),
                         used_files, windows.examples(), o.window, skipped));
  }
  d.features.assign(static_cast<size_t>(windows.examples()) * static_cast<size_t>(o.window), 0.0f);
  d.fields.push_back(std::move(windows));
  return d;
}

}  // namespace cerebro::datasets
