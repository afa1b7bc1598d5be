#pragma once
// The datasets a coordinator keeps by name (docs/SPEC.md "Registered datasets", docs/API.md "Datasets"):
// each is a table of [data] keys with absolute paths, registered by a path on the cluster or uploaded,
// which a spec takes with `[data] dataset = "NAME"`. Durable: every change is written to
// <state>/datasets.json (whole, atomically) before it is answered, so a restarted coordinator has them.
// Plain code, owned by the coordinator actor (one thread); the tables are checked before they get here
// (runtime/spec check_dataset_table).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

struct RegisteredDataset {
  std::string name;
  nlohmann::json data = nlohmann::json::object();  // its [data] keys, paths absolute
  // The folder its files were uploaded to (under <state>/uploads); "" for one registered by a path.
  std::string upload_dir;
  int64_t registered_unix = 0;
};
nlohmann::json to_json(const RegisteredDataset& dataset);

class DatasetRegistry {
 public:
  // The registry of a coordinator whose state is in `state_dir`: read from its datasets.json (none
  // yet: empty). A file that does not parse fails naming it, and is never overwritten.
  static Result<std::unique_ptr<DatasetRegistry>> open(const std::string& state_dir);

  const std::string& file() const { return file_; }
  // By name.
  const std::vector<RegisteredDataset>& list() const { return datasets_; }
  const RegisteredDataset* find(const std::string& name) const;
  // {name: data} of every dataset: what the spec parser takes.
  nlohmann::json tables() const;
  // The folders of the uploaded ones (runtime/spec/spec_paths.hpp AllowedPlaces::datasets).
  std::vector<std::string> upload_dirs() const;

  // Written before it returns; failed_precondition when the name is taken (nothing changes).
  Status add(RegisteredDataset dataset);
  // The dataset removed (written before it returns); not_found naming the registered ones. An uploaded
  // dataset's files stay where they are: a run that read them may still resume.
  Result<RegisteredDataset> remove(const std::string& name);

 private:
  explicit DatasetRegistry(std::string file) : file_(std::move(file)) {}
  Status save(const std::vector<RegisteredDataset>& datasets) const;
  std::string file_;
  std::vector<RegisteredDataset> datasets_;
};

}  // namespace cerebro
