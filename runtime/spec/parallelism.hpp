#pragma once
// How configs may train: MOP only, data-parallel gangs whenever
// workers are free for one, or a cost model choosing per decision. One table,
// read by `cerebro simulate --parallelism` and the gang planner
// (runtime/scheduling/gang_planner.hpp).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cerebro {

enum class Parallelism {
  automatic,  // "auto": a gang when the cost model says it finishes the remaining work sooner
  mop,        // every unit alone on one worker (model hopping only)
  data,       // a gang whenever two or more idle holders can form one
};

struct ParallelismInfo {
  Parallelism kind;
  std::string name;         // the spelling in specs, JSON, the CLI and messages
  std::string description;  // one line, for help texts
};

// Every mode, the default ("auto") first.
const std::vector<ParallelismInfo>& parallelism_registry();

std::string to_string(Parallelism kind);
std::optional<Parallelism> parse_parallelism(const std::string& name);
std::ostream& operator<<(std::ostream& os, Parallelism kind);
// The accepted names, the default first: auto, mop, data.
const std::vector<std::string>& parallelism_names();

}  // namespace cerebro
