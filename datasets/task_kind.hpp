#pragma once
// What an experiment learns, as far as its labels go ([experiment] task):
// classification reads one class index per example; regression one or more
// numeric targets; multilabel a set of labels per example (a `;`-separated
// CSV cell), kept as a multi-hot row. Captioning, detection and language
// modelling learn structured examples (datasets/dataset.hpp RaggedField):
// an image's captions, an image's boxes and their classes, a window of
// tokens (docs/TASKS.md). The ETL reads labels by it, the models pick the
// task's loss and metrics by it (models/task.hpp).

#include <optional>
#include <string>
#include <vector>

namespace cerebro::datasets {

enum class TaskKind { classification, regression, multilabel, captioning, detection, language_model };

// "classification" | "regression" | "multilabel" | "captioning" | "detection" | "language_model"
std::string to_string(TaskKind task);
std::optional<TaskKind> parse_task_kind(const std::string& name);
// The accepted names, the default (classification) first.
const std::vector<std::string>& task_kind_names();
// True for the tasks whose targets are ragged fields rather than labels or a row of targets.
bool has_structured_targets(TaskKind task);

}  // namespace cerebro::datasets
