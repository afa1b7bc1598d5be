#pragma once
// Which files a spec makes the server read (docs/CLUSTER.md, "Data roots"): every path key of a parsed
// spec (the data's paths and, under `path`, its annotations and image root; the TorchScript models of
// [space] model; warm_start's run directories), and the check a coordinator started with --data-root
// makes of them before it runs anything: each must lie under one of the places it allows (its data roots,
// the folder of the files a submission brought, its own run directories for warm_start). Paths are
// compared after symbolic links and ".." are resolved, so neither leads out of a root.

#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

// A path key of a spec and the path it names (absolute, as the parser resolved it).
struct SpecPath {
  std::string key;  // "[data] path", "[space] model", "[experiment] warm_start"
  std::string path;
  bool run_directory = false;  // warm_start's: an earlier run, which may also be one of the coordinator's
};
std::vector<SpecPath> spec_paths(const ExperimentSpec& spec);

struct AllowedPlaces {
  std::vector<std::string> roots;  // the data roots: every key may read under them
  std::string brought;             // the folder of the files the submission brought ("": none)
  std::string runs;                // the coordinator's run directories: warm_start may read them
};

// OK when every path of `spec` lies under a place it may read; otherwise a permission_denied error naming
// the key, the path and the roots (never what the file holds).
Status check_spec_paths(const ExperimentSpec& spec, const AllowedPlaces& allowed);

// True when a [space] model entry names a TorchScript file (it ends in ".pt") rather than a zoo model.
bool names_model_file(const std::string& entry);

// True when `path` is `root` or inside it, both resolved (symbolic links followed as far as they exist).
bool path_is_under(const std::string& path, const std::string& root);

}  // namespace cerebro
