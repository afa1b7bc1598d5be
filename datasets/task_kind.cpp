#include "datasets/task_kind.hpp"

#include <array>

#include "runtime/base/enum_names.hpp"

namespace cerebro::datasets {

namespace {
constexpr std::array<EnumName<TaskKind>, 6> kTaskNames = {{{TaskKind::classification, "classification"},
                                                           {TaskKind::regression, "regression"},
                                                           {TaskKind::multilabel, "multilabel"},
                                                           {TaskKind::captioning, "captioning"},
                                                           {TaskKind::detection, "detection"},
                                                           {TaskKind::language_model, "language_model"}}};
}  // namespace

std::string to_string(TaskKind task) { return enum_name(kTaskNames, task); }

std::optional<TaskKind> parse_task_kind(const std::string& name) { return enum_named<TaskKind>(kTaskNames, name); }

const std::vector<std::string>& task_kind_names() {
  static const std::vector<std::string> names = enum_names(kTaskNames);
  return names;
}

bool has_structured_targets(TaskKind task) {
  return task == TaskKind::captioning || task == TaskKind::detection || task == TaskKind::language_model;
}

}  // namespace cerebro::datasets
