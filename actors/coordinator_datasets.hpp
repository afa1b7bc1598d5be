#pragma once
// What the coordinator answers about its registered datasets (docs/API.md "Datasets"): plain code over
// its DatasetRegistry and data roots, which its actor calls for a datasets_atom request. A dataset to
// add is checked as a spec's [data] is, and its paths as a submission's are (docs/CLUSTER.md "Data
// roots"): an uploaded one's files must lie in its upload folder or under the roots.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/cluster/dataset_registry.hpp"
#include "runtime/net/cluster_messages.hpp"

namespace cerebro {

struct DatasetPlaces {
  std::vector<std::string> data_roots;
  std::string state_dir;  // an upload's folder must be one folder of <state_dir>/uploads
  std::string cache_dir;  // the prepared-data cache that `list` shows (datasets/prepared_cache.hpp)
};

// list: {"datasets": [...], "prepared": [...]}; add: the dataset added; remove: the dataset removed.
// `registry` null: the registry could not be read (`problem` says why): list answers without it, a
// change is refused.
Result<nlohmann::json> answer_datasets(DatasetRegistry* registry, const std::string& problem,
                                       const DatasetPlaces& places, const dataset_request& request, int64_t now_unix);

}  // namespace cerebro
