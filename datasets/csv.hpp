#pragma once
// CSV tables with a header row: one column holds the class label, every other column is a float feature.

#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

// Header row required. Every column except `label_column` is a numeric feature (float). Label values: if
// all parse as non-negative integers they are used as class indices (and *class_names is cleared);
// otherwise the distinct strings sorted become classes 0..k-1 and their names are returned in *class_names
// (may be nullptr). Errors name file, line and column: missing file, empty file, no header, label column
// not found (lists the columns found), non-numeric cell (value, line number, column name), wrong number
// of cells in a row, no data rows. Quoted fields ("a,b", "" for a quote) and CRLF line endings are
// handled; a quoted field may not span lines. Blank lines are skipped. sample_shape {F}.
Result<Dataset> load_csv(const std::string& path, const std::string& label_column,
                         std::vector<std::string>* class_names);

}  // namespace cerebro::datasets
