#include "runtime/spec/parallelism.hpp"

#include <ostream>

namespace cerebro {

const std::vector<ParallelismInfo>& parallelism_registry() {
  static const std::vector<ParallelismInfo> table = {
      {Parallelism::automatic, "auto",
       "a data-parallel gang when the cost model estimates it finishes the remaining work sooner than MOP"},
      {Parallelism::mop, "mop", "model hopping only: every unit alone on one worker"},
      {Parallelism::data, "data", "a data-parallel gang whenever two or more idle holders can form one"},
  };
  return table;
}

std::string to_string(Parallelism kind) {
  for (const auto& info : parallelism_registry()) {
    if (info.kind == kind) return info.name;
  }
  return "unknown";
}

std::optional<Parallelism> parse_parallelism(const std::string& name) {
  for (const auto& info : parallelism_registry()) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Parallelism kind) { return os << to_string(kind); }

const std::vector<std::string>& parallelism_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& info : parallelism_registry()) out.push_back(info.name);
    return out;
  }();
  return names;
}

}  // namespace cerebro
