#include "datasets/dataset_source.hpp"

#include <array>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "runtime/base/enum_names.hpp"

namespace cerebro::datasets {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, DatasetLoader>& registry() {
  static std::map<std::string, DatasetLoader> r;
  return r;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

Status check_dataset(const Dataset& d, const char* which) {
  if (d.sample_shape.empty()) return Status::invalid_argument(fmt::format("the {} set has no sample_shape", which));
  for (auto size : d.sample_shape)
    if (size <= 0)
      return Status::invalid_argument(fmt::format("the {} set's sample_shape [{}] has a size that is not positive",
                                                  which, fmt::join(d.sample_shape, ",")));
  if (d.has_targets() && d.targets.size() % static_cast<size_t>(d.target_width) != 0)
    return Status::invalid_argument(
        fmt::format("the {} set has {} target values, not a multiple of its target width {}", which, d.targets.size(),
                    d.target_width));
  auto expected = static_cast<size_t>(d.size() * d.sample_numel());
  if (d.features.size() != expected)
    return Status::invalid_argument(fmt::format("the {} set has {} features for {} labels of shape [{}]: expected {}",
                                                which, d.features.size(), d.size(), fmt::join(d.sample_shape, ","),
                                                expected));
  return Status::ok_status();
}

Status check_source_data(const SourceData& data) {
  if (data.train.size() == 0) return Status::invalid_argument("the loader returned no training examples");
  if (auto s = check_dataset(data.train, "training"); !s.ok()) return s;
  if (data.test) {
    if (auto s = check_dataset(*data.test, "test"); !s.ok()) return s;
    if (data.test->sample_shape != data.train.sample_shape)
      return Status::invalid_argument(fmt::format("test examples have shape [{}] but training examples have shape [{}]",
                                                  fmt::join(data.test->sample_shape, ","),
                                                  fmt::join(data.train.sample_shape, ",")));
  }
  return Status::ok_status();
}

}  // namespace

namespace {
constexpr std::array<EnumName<BuiltinSource>, 5> kBuiltinSourceNames = {{{BuiltinSource::idx, "idx"},
                                                                         {BuiltinSource::csv, "csv"},
                                                                         {BuiltinSource::images, "images"},
                                                                         {BuiltinSource::coco, "coco"},
                                                                         {BuiltinSource::text, "text"}}};
}  // namespace

const std::vector<std::string>& builtin_dataset_sources() {
  static const std::vector<std::string> names = enum_names(kBuiltinSourceNames);
  return names;
}

std::string to_string(BuiltinSource source) { return enum_name(kBuiltinSourceNames, source); }

std::optional<BuiltinSource> parse_builtin_source(const std::string& name) {
  return enum_named<BuiltinSource>(kBuiltinSourceNames, name);
}

Status register_dataset_source(const std::string& name, DatasetLoader loader) {
  if (parse_builtin_source(name))
    return Status::invalid_argument(fmt::format("dataset source '{}' is built in and cannot be replaced", name));
  if (!valid_name(name))
    return Status::invalid_argument(
        fmt::format("dataset source name '{}' must start with a lower-case letter and hold only "
                    "lower-case letters, digits, '_' and '-'",
                    name));
  if (!loader) return Status::invalid_argument(fmt::format("dataset source '{}': the loader is empty", name));
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[name] = std::move(loader);
  return Status::ok_status();
}

bool unregister_dataset_source(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry().erase(name) > 0;
}

std::vector<std::string> registered_dataset_sources() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> names;
  for (const auto& [name, loader] : registry()) names.push_back(name);
  return names;
}

bool is_known_dataset_source(const std::string& name) {
  for (const auto& builtin : builtin_dataset_sources())
    if (name == builtin) return true;
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry().count(name) > 0;
}

Result<SourceData> load_registered_source(const std::string& name) {
  DatasetLoader loader;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it == registry().end()) return Status::not_found(fmt::format("source '{}' is not registered", name));
    loader = it->second;  // a copy: the loader runs without the lock held
  }
  const std::string context = fmt::format("source '{}'", name);
  try {
    auto data = loader();
    if (!data.ok()) return data.status().with_context(context);
    if (auto s = check_source_data(*data); !s.ok()) return s.with_context(context);
    return data;
  } catch (const std::exception& e) {
    return Status::internal(fmt::format("{}: the loader threw: {}", context, e.what()));
  }
}

}  // namespace cerebro::datasets
