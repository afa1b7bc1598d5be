#include "datasets/task_kind.hpp"

namespace cerebro::datasets {

namespace {
const std::pair<TaskKind, const char*> kTaskNames[] = {{TaskKind::classification, "classification"},
                                                       {TaskKind::regression, "regression"},
                                                       {TaskKind::multilabel, "multilabel"}};
}  // namespace

std::string to_string(TaskKind task) {
  for (const auto& [t, name] : kTaskNames)
    if (t == task) return name;
  return "classification";
}

std::optional<TaskKind> parse_task_kind(const std::string& name) {
  for (const auto& [t, text] : kTaskNames)
    if (name == text) return t;
  return std::nullopt;
}

const std::vector<std::string>& task_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : kTaskNames) out.push_back(entry.second);
    return out;
  }();
  return names;
}

}  // namespace cerebro::datasets
