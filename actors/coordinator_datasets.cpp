#include "actors/coordinator_datasets.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "datasets/prepared_cache.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/spec/spec_paths.hpp"

namespace cerebro {

namespace fs = std::filesystem;

namespace {

nlohmann::json prepared_entries(const std::string& cache_dir) {
  nlohmann::json out = nlohmann::json::array();
  auto entries = datasets::PreparedCache(cache_dir).list();
  if (!entries.ok()) return out;
  for (const auto& e : *entries) {
    if (!e.problem.empty()) continue;  // unreadable: `cerebro cache prune` removes it
    out.push_back({{"name", e.name},
                   {"source", e.source},
                   {"inputs", e.inputs},
                   {"bytes", e.bytes},
                   {"partitions", e.partitions},
                   {"train_examples", e.train_examples},
                   {"last_used_unix", e.last_used_unix}});
  }
  return out;
}

// The upload folder a request names must be one the HTTP server made: one folder of <state>/uploads.
Status check_upload_dir(const std::string& upload_dir, const std::string& state_dir) {
  std::error_code ec;
  const auto uploads = fs::absolute(fs::path(state_dir) / "uploads", ec).lexically_normal();
  const auto dir = fs::absolute(upload_dir, ec).lexically_normal();
  if (dir.parent_path() != uploads || !fs::is_directory(dir, ec))
    return Status::permission_denied("an uploaded dataset's files are in a folder of the coordinator's uploads");
  return Status::ok_status();
}

Result<nlohmann::json> add_dataset(DatasetRegistry& registry, const DatasetPlaces& places, const dataset_request& r,
                                   int64_t now_unix) {
  if (auto name = check_dataset_name(r.name); !name.ok()) return name;
  auto table = nlohmann::json::parse(r.data_json, nullptr, false);
  if (!table.is_object())
    return Status::invalid_argument(
        "a dataset's \"data\" is an object of [data] keys, e.g. {\"source\": \"csv\", ...}");
  const bool uploaded = !r.upload_dir.empty();
  if (uploaded)
    if (auto inside = check_upload_dir(r.upload_dir, places.state_dir); !inside.ok()) return inside;
  // Relative paths: an upload's start in its folder; a path on the cluster's under the first data root
  // (then the others), as a submission's do.
  std::error_code ec;
  const std::string base = uploaded                    ? r.upload_dir
                           : places.data_roots.empty() ? fs::current_path(ec).string()
                                                       : places.data_roots.front();
  auto checked = check_dataset_table(table, base, uploaded ? std::vector<std::string>{} : places.data_roots,
                                     fmt::format("dataset \"{}\"", r.name));
  if (!checked.ok()) return checked.status();
  if (uploaded || !places.data_roots.empty()) {
    ExperimentSpec spec;
    spec.data = checked->data;
    AllowedPlaces allowed{places.data_roots, uploaded ? r.upload_dir : "", ""};
    if (auto inside = check_spec_paths(spec, allowed); !inside.ok()) return inside;
  }
  RegisteredDataset dataset{r.name, checked->table, r.upload_dir, now_unix};
  if (auto added = registry.add(dataset); !added.ok()) return added;
  return to_json(dataset);
}

}  // namespace

Result<nlohmann::json> answer_datasets(DatasetRegistry* registry, const std::string& problem,
                                       const DatasetPlaces& places, const dataset_request& r, int64_t now_unix) {
  const auto command = static_cast<DatasetCommand>(r.command);
  if (command == DatasetCommand::list) {
    nlohmann::json list = nlohmann::json::array();
    if (registry)
      for (const auto& d : registry->list()) list.push_back(to_json(d));
    nlohmann::json out{{"datasets", list}, {"prepared", prepared_entries(places.cache_dir)}};
    if (!registry) out["problem"] = problem;
    return out;
  }
  if (!registry) return Status::failed_precondition("the registered datasets cannot be changed: " + problem);
  if (command == DatasetCommand::add) return add_dataset(*registry, places, r, now_unix);
  if (command == DatasetCommand::remove) {
    auto removed = registry->remove(r.name);
    if (!removed.ok()) return removed.status();
    return to_json(*removed);
  }
  return Status::invalid_argument(fmt::format("unknown dataset command {}", r.command));
}

}  // namespace cerebro
