#include "datasets/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits one line into cells. Quoted cells may contain commas and "" for a literal quote.
Status split_cells(std::string_view line, std::vector<std::string>& cells) {
  cells.clear();
  size_t i = 0;
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        cell += line[i++];
      }
      if (!closed) return Status::invalid_argument("unterminated quoted field");
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') return Status::invalid_argument("unexpected text after a closing quote");
    } else {
      const size_t comma = line.find(',', i);
      const size_t stop = comma == std::string_view::npos ? line.size() : comma;
      cell = std::string(trim(line.substr(i, stop - i)));
      i = stop;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) return Status::ok_status();
    ++i;  // the comma
  }
}

bool parse_float(std::string_view text, float& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

bool parse_class_index(std::string_view text, int64_t& out) {
  if (text.empty() || text.size() > 18) return false;  // 18 digits cannot overflow int64
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// Yields the lines of `text` with their 1-based numbers, without the line ending (LF or CRLF).
class LineReader {
 public:
  explicit LineReader(const std::string& text) : text_(text) {}
  bool next(std::string_view& line, int64_t& number) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    line = std::string_view(text_).substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    number = ++line_number_;
    return true;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int64_t line_number_ = 0;
};

}  // namespace

Result<Dataset> load_csv(const std::string& path, const std::string& label_column,
                         std::vector<std::string>* class_names) {
  auto text = read_whole_file(path);
  if (!text) return text.status();
  if (trim(*text).find_first_not_of("\r\n") == std::string_view::npos) return Status::invalid_argument(path + ": file is empty");

  LineReader lines(*text);
  std::string_view line;
  int64_t line_no = 0;
  lines.next(line, line_no);
  if (trim(line).empty()) return Status::invalid_argument(path + ": no header row: line 1 is blank");
  std::vector<std::string> header;
  if (Status s = split_cells(line, header); !s.ok()) return Status::invalid_argument(fmt::format("{}: line 1: {}", path, s.message()));

  const auto label_at = std::find(header.begin(), header.end(), label_column);
  if (label_at == header.end()) {
    float unused = 0;
    const bool looks_like_data =
        std::all_of(header.begin(), header.end(), [&](const std::string& c) { return parse_float(c, unused); });
    if (looks_like_data) {
      return Status::invalid_argument(fmt::format("{}: no header row: line 1 holds numbers, the first line must name the columns", path));
    }
    return Status::invalid_argument(fmt::format("{}: label column '{}' not found; the header has columns: {}", path, label_column,
                                                fmt::join(header, ", ")));
  }
  if (std::count(header.begin(), header.end(), label_column) > 1) {
    return Status::invalid_argument(fmt::format("{}: label column '{}' appears more than once in the header", path, label_column));
  }
  const size_t label_index = static_cast<size_t>(label_at - header.begin());
  const size_t num_features = header.size() - 1;

  Dataset data;
  data.sample_shape = {static_cast<int64_t>(num_features)};
  std::vector<std::string> raw_labels;
  std::vector<std::string> cells;
  while (lines.next(line, line_no)) {
    if (trim(line).empty()) continue;
    if (Status s = split_cells(line, cells); !s.ok()) {
      return Status::invalid_argument(fmt::format("{}: line {}: {}", path, line_no, s.message()));
    }
    if (cells.size() != header.size()) {
      return Status::invalid_argument(fmt::format("{}: line {}: expected {} cells as in the header, found {}", path, line_no,
                                                  header.size(), cells.size()));
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c == label_index) continue;
      float value = 0;
      if (!parse_float(cells[c], value)) {
        return Status::invalid_argument(fmt::format("{}: line {}, column '{}': '{}' is not a number", path, line_no, header[c], cells[c]));
      }
      data.features.push_back(value);
    }
    if (cells[label_index].empty()) {
      return Status::invalid_argument(fmt::format("{}: line {}, column '{}': empty label", path, line_no, label_column));
    }
    raw_labels.push_back(std::move(cells[label_index]));
  }
  if (raw_labels.empty()) return Status::invalid_argument(path + ": no data rows after the header");

  data.labels.resize(raw_labels.size());
  bool integer_labels = true;
  for (size_t i = 0; i < raw_labels.size() && integer_labels; ++i) {
    integer_labels = parse_class_index(raw_labels[i], data.labels[i]);
  }
  if (class_names) class_names->clear();
  if (!integer_labels) {
    // Distinct names in sorted order become classes 0..k-1: the same names give the same indices.
    std::map<std::string, int64_t> index_of;
    for (const auto& name : raw_labels) index_of.emplace(name, 0);
    int64_t next = 0;
    for (auto& [name, index] : index_of) {
      index = next++;
      if (class_names) class_names->push_back(name);
    }
    for (size_t i = 0; i < raw_labels.size(); ++i) data.labels[i] = index_of[raw_labels[i]];
  }
  return data;
}

}  // namespace cerebro::datasets
