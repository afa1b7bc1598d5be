#include "runtime/spec/spec_paths.hpp"

#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fs = std::filesystem;

namespace cerebro {

namespace {

// The TorchScript files a [space] model entry names: strings ending in ".pt", in a list or a
// distribution's values.
void model_files(const nlohmann::json& entry, std::vector<SpecPath>& out) {
  if (entry.is_string() && names_model_file(entry.get<std::string>())) {
    out.push_back({"[space] model", entry.get<std::string>(), false});
  } else if (entry.is_array()) {
    for (const auto& item : entry) model_files(item, out);
  } else if (entry.is_object() && entry.contains("values")) {
    model_files(entry["values"], out);
  }
}

std::string resolved(const std::string& path) {
  std::error_code ec;
  auto p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::path(path).lexically_normal();
  return p.string();
}

}  // namespace

bool names_model_file(const std::string& entry) {
  constexpr std::string_view kSuffix = ".pt";
  return entry.size() >= kSuffix.size() && entry.compare(entry.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::vector<SpecPath> spec_paths(const ExperimentSpec& spec) {
  const DataSpec& d = spec.data;
  std::vector<SpecPath> out;
  for (const auto& [key, value] : data_path_fields(d))
    if (!value->empty()) out.push_back({fmt::format("[data] {}", key), *value, false});
  // Read relative to `path` (docs/SPEC.md): they may not leave it for another place either.
  if (!d.path.empty()) {
    if (!d.annotations.empty())
      out.push_back({"[data] annotations", (fs::path(d.path) / d.annotations).string(), false});
    if (!d.image_root.empty()) out.push_back({"[data] image_root", (fs::path(d.path) / d.image_root).string(), false});
  }
  if (spec.space.is_object() && spec.space.contains("model")) model_files(spec.space["model"], out);
  for (const auto& dir : spec.warm_start) out.push_back({"[experiment] warm_start", dir, true});
  return out;
}

bool path_is_under(const std::string& path, const std::string& root) {
  const fs::path p = resolved(path), r = resolved(root);
  auto pi = p.begin();
  for (auto ri = r.begin(); ri != r.end(); ++ri, ++pi) {
    if (ri->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *ri) return false;
  }
  return true;
}

AllowedPlaces allowed_places(const std::vector<std::string>& data_roots, const std::string& state_dir,
                             const std::string& spec_dir) {
  AllowedPlaces allowed{data_roots, "", (fs::path(state_dir) / "experiments").string()};
  std::error_code ec;
  const auto uploads = fs::absolute(fs::path(state_dir) / "uploads", ec).lexically_normal();
  const auto dir = fs::absolute(spec_dir, ec).lexically_normal();
  if (!spec_dir.empty() && dir.parent_path() == uploads) allowed.brought = dir.string();
  return allowed;
}

std::string path_base(const AllowedPlaces& allowed, const std::string& spec_dir) {
  if (allowed.roots.empty() || !allowed.brought.empty()) return spec_dir;
  for (const auto& root : allowed.roots)
    if (!spec_dir.empty() && path_is_under(spec_dir, root)) return spec_dir;
  return allowed.roots.front();
}

Status check_spec_paths(const ExperimentSpec& spec, const AllowedPlaces& allowed) {
  for (const auto& [key, path, run_directory] : spec_paths(spec)) {
    bool ok = false;
    for (const auto& root : allowed.roots) ok = ok || path_is_under(path, root);
    if (!allowed.brought.empty()) ok = ok || path_is_under(path, allowed.brought);
    if (run_directory && !allowed.runs.empty()) ok = ok || path_is_under(path, allowed.runs);
    for (const auto& dataset : allowed.datasets) ok = ok || (!run_directory && path_is_under(path, dataset));
    if (ok) continue;
    return Status::permission_denied(
        fmt::format("{} = \"{}\" is outside the data roots this coordinator reads ({}){}", key, path,
                    allowed.roots.empty() ? std::string("none") : fmt::format("{}", fmt::join(allowed.roots, ", ")),
                    allowed.brought.empty() ? "" : " and the files the submission brought"));
  }
  return Status::ok_status();
}

}  // namespace cerebro
