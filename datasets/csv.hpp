#pragma once
// CSV tables with a header row: one column holds the class label, every other column is a float feature.

#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "datasets/task_kind.hpp"
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

// The labels of another task (classification: load_csv). Regression: every column in `label_columns` is a
// numeric target (target_width = their count, in that order; *label_names = the columns); a cell that is
// not a number is an error naming the file, data row and column. Multilabel: one column whose cells hold
// `;`-separated label names (blank: no label); the distinct names, sorted (by value when all are
// integers), become the multi-hot target columns, returned in *label_names. The features are every other
// column, as for load_csv.
Result<Dataset> load_csv_targets(const std::string& path, TaskKind task, const std::vector<std::string>& label_columns,
                                 std::vector<std::string>* label_names);

// The feature columns of a CSV file, in order: every column except `label_columns`.
Result<std::vector<std::string>> csv_feature_columns(const std::string& path,
                                                     const std::vector<std::string>& label_columns);

// The columns `feature_columns` of a CSV file as features, in that order (other columns, such as a label,
// are ignored), for predicting with a trained model; labels are all 0. Errors name the file and the
// missing column, or the line and column of a cell that is not a number.
Result<Dataset> load_csv_features(const std::string& path, const std::vector<std::string>& feature_columns);

}  // namespace cerebro::datasets
