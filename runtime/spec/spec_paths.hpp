#pragma once
// Which files a spec makes the server read (docs/CLUSTER.md, "Data roots"): every path key of a parsed
// spec (the data's paths and, under `path`, its annotations and image root; the TorchScript models of
// [space] model; warm_start's run directories), and the check a coordinator started with --data-root
// makes of them before it runs anything: each must lie under one of the places it allows (its data roots,
// the folder of the files a submission brought, its own run directories for warm_start). Paths are
// compared after symbolic links and ".." are resolved, so neither leads out of a root.

#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

// The [data] keys that name files, with their fields (const or not, as `data` is): the parser resolves
// them, spec_paths lists them.
template <class Data>
std::vector<std::pair<const char*, decltype(&std::declval<Data&>().path)>> data_path_fields(Data& data) {
  return {{"path", &data.path},
          {"train_images", &data.train_images},
          {"train_labels", &data.train_labels},
          {"test_images", &data.test_images},
          {"test_labels", &data.test_labels},
          {"train", &data.train},
          {"test", &data.test}};
}

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
  // The folders of the uploaded datasets the coordinator keeps (DatasetRegistry::upload_dirs()): a
  // registered dataset's files are read there.
  std::vector<std::string> datasets;
};

// The places a submission may read from a coordinator with `data_roots` and state in `state_dir`: the
// roots; the folder of the files it brought, when `spec_dir` is one folder of `state_dir`/uploads (where
// the HTTP server writes them); and, for warm_start, `state_dir`/experiments.
AllowedPlaces allowed_places(const std::vector<std::string>& data_roots, const std::string& state_dir,
                             const std::string& spec_dir);

// Where a submission's relative paths start: `spec_dir` without roots, for brought files, or when it is
// itself under a root; otherwise the first root (the others are searched after it).
std::string path_base(const AllowedPlaces& allowed, const std::string& spec_dir);

// OK when every path of `spec` lies under a place it may read; otherwise a permission_denied error naming
// the key, the path and the roots (never what the file holds).
Status check_spec_paths(const ExperimentSpec& spec, const AllowedPlaces& allowed);

// True when a [space] model entry names a TorchScript file (it ends in ".pt") rather than a zoo model.
bool names_model_file(const std::string& entry);

// True when `path` is `root` or inside it, both resolved (symbolic links followed as far as they exist).
bool path_is_under(const std::string& path, const std::string& root);

}  // namespace cerebro
