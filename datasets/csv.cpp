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

namespace {

// The table with its label cells set aside: features in `data`, the raw label cells per example and label
// column (row-major, label_columns.size() per example).
struct Table {
  std::vector<std::string> header;
  Dataset data;
  std::vector<std::string> label_cells;
  std::vector<int64_t> line_of_row;  // the file's line number of each data row
};

Result<Table> read_table(const std::string& path, const std::vector<std::string>& label_columns) {
  auto text = read_whole_file(path);
  if (!text) return text.status();
  if (trim(*text).find_first_not_of("\r\n") == std::string_view::npos)
    return Status::invalid_argument(path + ": file is empty");

  LineReader lines(*text);
  std::string_view line;
  int64_t line_no = 0;
  lines.next(line, line_no);
  if (trim(line).empty()) return Status::invalid_argument(path + ": no header row: line 1 is blank");
  Table t;
  std::vector<std::string>& header = t.header;
  if (Status s = split_cells(line, header); !s.ok())
    return Status::invalid_argument(fmt::format("{}: line 1: {}", path, s.message()));

  std::vector<size_t> label_index;
  for (const auto& label_column : label_columns) {
    const auto label_at = std::find(header.begin(), header.end(), label_column);
    if (label_at == header.end()) {
      float unused = 0;
      const bool looks_like_data =
          std::all_of(header.begin(), header.end(), [&](const std::string& c) { return parse_float(c, unused); });
      if (looks_like_data) {
        return Status::invalid_argument(
            fmt::format("{}: no header row: line 1 holds numbers, the first line must name the columns", path));
      }
      // The header's names are the file's content: counted, never shown (docs/CLUSTER.md "Data roots").
      return Status::invalid_argument(fmt::format("{}: label column '{}' not found among the header's {} columns", path,
                                                  label_column, header.size()));
    }
    if (std::count(header.begin(), header.end(), label_column) > 1) {
      return Status::invalid_argument(
          fmt::format("{}: label column '{}' appears more than once in the header", path, label_column));
    }
    if (std::count(label_columns.begin(), label_columns.end(), label_column) > 1) {
      return Status::invalid_argument(fmt::format("label column '{}' is named more than once", label_column));
    }
    label_index.push_back(static_cast<size_t>(label_at - header.begin()));
  }
  const size_t num_features = header.size() - label_columns.size();
  if (num_features == 0) return Status::invalid_argument(path + ": every column is a label column; no features left");

  Dataset& data = t.data;
  data.sample_shape = {static_cast<int64_t>(num_features)};
  std::vector<bool> is_label(header.size(), false);
  for (size_t index : label_index) is_label[index] = true;
  std::vector<std::string> cells;
  int64_t rows = 0;
  while (lines.next(line, line_no)) {
    if (trim(line).empty()) continue;
    if (Status s = split_cells(line, cells); !s.ok()) {
      return Status::invalid_argument(fmt::format("{}: line {}: {}", path, line_no, s.message()));
    }
    if (cells.size() != header.size()) {
      return Status::invalid_argument(fmt::format("{}: line {}: expected {} cells as in the header, found {}", path,
                                                  line_no, header.size(), cells.size()));
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      if (is_label[c]) continue;
      float value = 0;
      if (!parse_float(cells[c], value)) {
        return Status::invalid_argument(fmt::format("{}: line {}, column {}: not a number", path, line_no, c + 1));
      }
      data.features.push_back(value);
    }
    for (size_t index : label_index) t.label_cells.push_back(std::move(cells[index]));
    t.line_of_row.push_back(line_no);
    ++rows;
  }
  if (rows == 0) return Status::invalid_argument(path + ": no data rows after the header");
  return t;
}

}  // namespace

Result<Dataset> load_csv(const std::string& path, const std::string& label_column,
                         std::vector<std::string>* class_names) {
  auto table = read_table(path, {label_column});
  if (!table) return table.status();
  Dataset data = std::move(table->data);
  std::vector<std::string>& raw_labels = table->label_cells;
  for (size_t i = 0; i < raw_labels.size(); ++i) {
    if (raw_labels[i].empty()) {
      return Status::invalid_argument(
          fmt::format("{}: line {}, column '{}': empty label", path, table->line_of_row[i], label_column));
    }
  }

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

Result<Dataset> load_csv_targets(const std::string& path, TaskKind task, const std::vector<std::string>& label_columns,
                                 std::vector<std::string>* label_names) {
  if (task == TaskKind::classification) {
    if (label_columns.size() != 1) return Status::invalid_argument("classification takes exactly one label column");
    return load_csv(path, label_columns[0], label_names);
  }
  if (label_columns.empty()) return Status::invalid_argument("no label column given");
  if (task == TaskKind::multilabel && label_columns.size() != 1) {
    return Status::invalid_argument(
        fmt::format("multilabel takes one label column of ';'-separated labels, not {}", label_columns.size()));
  }
  auto table = read_table(path, label_columns);
  if (!table) return table.status();
  Dataset data = std::move(table->data);
  const auto& cells = table->label_cells;
  if (label_names) label_names->clear();
  if (task == TaskKind::regression) {
    data.target_width = static_cast<int64_t>(label_columns.size());
    data.targets.resize(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
      const size_t column = i % label_columns.size();
      if (!parse_float(cells[i], data.targets[i])) {
        return Status::invalid_argument(
            fmt::format("{}: line {}, column '{}': not a number (a regression target must be numeric)", path,
                        table->line_of_row[i / label_columns.size()], label_columns[column]));
      }
    }
    if (label_names) *label_names = label_columns;
    return data;
  }
  // Multilabel: each cell a ';'-separated set of label names (blank: none); the distinct names, sorted
  // (numerically when all are integers), are the columns of the multi-hot rows.
  std::vector<std::vector<std::string>> sets(cells.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < cells.size(); ++i) {
    std::string_view rest = cells[i];
    while (!rest.empty()) {
      const size_t semicolon = rest.find(';');
      const auto name = trim(rest.substr(0, semicolon));
      if (!name.empty()) sets[i].emplace_back(name);
      if (semicolon == std::string_view::npos) break;
      rest.remove_prefix(semicolon + 1);
    }
    names.insert(names.end(), sets[i].begin(), sets[i].end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.empty()) {
    return Status::invalid_argument(fmt::format("{}: column '{}' holds no labels in any row", path, label_columns[0]));
  }
  int64_t unused = 0;
  if (std::all_of(names.begin(), names.end(), [&](const std::string& n) { return parse_class_index(n, unused); })) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
  }
  std::map<std::string, size_t> index_of;
  for (size_t k = 0; k < names.size(); ++k) index_of[names[k]] = k;
  data.target_width = static_cast<int64_t>(names.size());
  data.targets.assign(cells.size() * names.size(), 0.0f);
  for (size_t i = 0; i < sets.size(); ++i)
    for (const auto& name : sets[i]) data.targets[i * names.size() + index_of[name]] = 1.0f;
  if (label_names) *label_names = std::move(names);
  return data;
}

Result<std::vector<std::string>> csv_feature_columns(const std::string& path,
                                                     const std::vector<std::string>& label_columns) {
  auto text = read_whole_file(path);
  if (!text) return text.status();
  LineReader lines(*text);
  std::string_view line;
  int64_t line_no = 0;
  std::vector<std::string> header;
  if (!lines.next(line, line_no) || !split_cells(line, header).ok())
    return Status::invalid_argument(path + ": no header row");
  std::vector<std::string> out;
  for (auto& column : header)
    if (std::find(label_columns.begin(), label_columns.end(), column) == label_columns.end()) out.push_back(column);
  return out;
}

Result<Dataset> load_csv_features(const std::string& path, const std::vector<std::string>& feature_columns) {
  auto text = read_whole_file(path);
  if (!text) return text.status();
  LineReader lines(*text);
  std::string_view line;
  int64_t line_no = 0;
  std::vector<std::string> header, cells;
  if (!lines.next(line, line_no) || trim(line).empty()) return Status::invalid_argument(path + ": no header row");
  if (Status s = split_cells(line, header); !s.ok())
    return Status::invalid_argument(fmt::format("{}: line 1: {}", path, s.message()));
  std::vector<size_t> index;
  for (const auto& column : feature_columns) {
    auto at = std::find(header.begin(), header.end(), column);
    if (at == header.end()) {
      return Status::invalid_argument(
          fmt::format("{}: feature column '{}' the model was trained on is missing from the header's {} columns", path,
                      column, header.size()));
    }
    index.push_back(static_cast<size_t>(at - header.begin()));
  }
  Dataset data;
  data.sample_shape = {static_cast<int64_t>(feature_columns.size())};
  while (lines.next(line, line_no)) {
    if (trim(line).empty()) continue;
    if (Status s = split_cells(line, cells); !s.ok())
      return Status::invalid_argument(fmt::format("{}: line {}: {}", path, line_no, s.message()));
    if (cells.size() != header.size()) {
      return Status::invalid_argument(fmt::format("{}: line {}: expected {} cells as in the header, found {}", path,
                                                  line_no, header.size(), cells.size()));
    }
    for (size_t i : index) {
      float value = 0;
      if (!parse_float(cells[i], value)) {
        return Status::invalid_argument(
            fmt::format("{}: line {}, column {} ('{}'): not a number", path, line_no, i + 1, header[i]));
      }
      data.features.push_back(value);
    }
    data.labels.push_back(0);
  }
  if (data.labels.empty()) return Status::invalid_argument(path + ": no data rows after the header");
  return data;
}

}  // namespace cerebro::datasets
