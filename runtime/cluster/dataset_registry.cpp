#include "runtime/cluster/dataset_registry.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/base/file_io.hpp"

namespace cerebro {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFileName = "datasets.json";

// One entry of the file, or nothing when it is not one (the whole file is then refused).
std::optional<RegisteredDataset> dataset_of(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto name = j.find("name");
  const auto data = j.find("data");
  if (name == j.end() || !name->is_string() || data == j.end() || !data->is_object()) return std::nullopt;
  RegisteredDataset d;
  d.name = name->get<std::string>();
  d.data = *data;
  if (auto upload = j.find("upload_dir"); upload != j.end() && upload->is_string()) d.upload_dir = *upload;
  if (auto when = j.find("registered_unix"); when != j.end() && when->is_number_integer())
    d.registered_unix = when->get<int64_t>();
  return d;
}

}  // namespace

nlohmann::json to_json(const RegisteredDataset& d) {
  return {{"name", d.name},
          {"data", d.data},
          {"uploaded", !d.upload_dir.empty()},
          {"upload_dir", d.upload_dir},
          {"registered_unix", d.registered_unix}};
}

Result<std::unique_ptr<DatasetRegistry>> DatasetRegistry::open(const std::string& state_dir) {
  const std::string file = (fs::path(state_dir) / kFileName).string();
  std::unique_ptr<DatasetRegistry> registry(new DatasetRegistry(file));
  std::error_code ec;
  if (!fs::exists(file, ec)) return registry;
  auto text = read_whole_file(file);
  if (!text.ok()) return text.status().with_context("the registered datasets");
  auto j = nlohmann::json::parse(*text, nullptr, false);
  const auto list = j.is_object() ? j.find("datasets") : j.end();
  if (list == j.end() || !list->is_array())
    return Status::corruption(fmt::format("{}: not a list of registered datasets (left as it is)", file));
  for (const auto& entry : *list) {
    auto dataset = dataset_of(entry);
    if (!dataset)
      return Status::corruption(fmt::format("{}: an entry is not a registered dataset (left as it is)", file));
    registry->datasets_.push_back(std::move(*dataset));
  }
  std::sort(registry->datasets_.begin(), registry->datasets_.end(),
            [](const RegisteredDataset& a, const RegisteredDataset& b) { return a.name < b.name; });
  return registry;
}

const RegisteredDataset* DatasetRegistry::find(const std::string& name) const {
  for (const auto& d : datasets_)
    if (d.name == name) return &d;
  return nullptr;
}

nlohmann::json DatasetRegistry::tables() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& d : datasets_) out[d.name] = d.data;
  return out;
}

std::vector<std::string> DatasetRegistry::upload_dirs() const {
  std::vector<std::string> out;
  for (const auto& d : datasets_)
    if (!d.upload_dir.empty()) out.push_back(d.upload_dir);
  return out;
}

Status DatasetRegistry::save(const std::vector<RegisteredDataset>& datasets) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : datasets) list.push_back(to_json(d));
  return write_file_atomically(file_, nlohmann::json{{"datasets", list}}.dump(2) + "\n");
}

Status DatasetRegistry::add(RegisteredDataset dataset) {
  if (find(dataset.name))
    return Status::failed_precondition(
        fmt::format("a dataset \"{}\" is registered already: remove it first, or pick another name", dataset.name));
  auto next = datasets_;
  auto at = std::lower_bound(next.begin(), next.end(), dataset.name,
                             [](const RegisteredDataset& d, const std::string& name) { return d.name < name; });
  next.insert(at, std::move(dataset));
  if (auto st = save(next); !st.ok()) return st.with_context("registering the dataset");
  datasets_ = std::move(next);
  return Status::ok_status();
}

Result<RegisteredDataset> DatasetRegistry::remove(const std::string& name) {
  auto it =
      std::find_if(datasets_.begin(), datasets_.end(), [&](const RegisteredDataset& d) { return d.name == name; });
  if (it == datasets_.end()) {
    std::vector<std::string> names;
    for (const auto& d : datasets_) names.push_back("\"" + d.name + "\"");
    return Status::not_found(
        fmt::format("no dataset \"{}\" is registered ({})", name,
                    names.empty() ? std::string("none is") : fmt::format("registered: {}", fmt::join(names, ", "))));
  }
  RegisteredDataset removed = *it;
  auto next = datasets_;
  next.erase(next.begin() + (it - datasets_.begin()));
  if (auto st = save(next); !st.ok()) return st.with_context("removing the dataset");
  datasets_ = std::move(next);
  return removed;
}

}  // namespace cerebro
