#include "runtime/spec/parallelism.hpp"

#include <ostream>

#include "runtime/base/enum_names.hpp"

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

std::string to_string(Parallelism kind) { return enum_name(parallelism_registry(), kind); }

std::optional<Parallelism> parse_parallelism(const std::string& name) {
  return enum_named<Parallelism>(parallelism_registry(), name);
}

std::ostream& operator<<(std::ostream& os, Parallelism kind) { return os << to_string(kind); }

const std::vector<std::string>& parallelism_names() {
  static const std::vector<std::string> names = enum_names(parallelism_registry());
  return names;
}

}  // namespace cerebro
