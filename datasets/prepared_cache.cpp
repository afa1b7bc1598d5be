#include "datasets/prepared_cache.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "datasets/dataset_source.hpp"
#include "datasets/shard.hpp"
#include "runtime/base/checksum.hpp"
#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bump when the key document or the entry layout changes: old entries then simply stop matching.
// 2: the task and the label columns; 3: the manifest says whether images were resized; 4: coco and text
constexpr int kCacheFormat = 4;
constexpr const char* kTempPrefix = ".tmp-";
constexpr const char* kTrashPrefix = ".trash-";

Result<json> input_entry(const std::string& role, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::not_found(path + ": no such file");
  auto sum = file_checksum(path);
  if (!sum) return sum.status();
  return json{{"role", role}, {"bytes", static_cast<int64_t>(fs::file_size(path, ec))}, {"checksum", *sum}};
}

// Every regular file at or below `path`, sorted: what a coco image root or a text folder may read.
Result<std::vector<std::string>> files_under(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return std::vector<std::string>{path};
  if (!fs::is_directory(path, ec)) return Status::not_found(path + ": no such file or folder");
  std::vector<std::string> out;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path().string());
  if (ec) return Status::io_error(fmt::format("cannot list {}: {}", path, ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int64_t mtime_unix(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  // file_time_type's clock is not system_clock in C++17: convert through "now" on both clocks.
  auto system = std::chrono::system_clock::now() + (t - fs::file_time_type::clock::now());
  return std::chrono::duration_cast<std::chrono::seconds>(system.time_since_epoch()).count();
}

int64_t directory_bytes(const fs::path& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) total += static_cast<int64_t>(it->file_size(ec));
  return total;
}

// A unique sibling name for temporaries and trash: pid and a counter.
std::string unique_suffix() {
  static std::atomic<int> counter{0};
  return fmt::format("{}-{}", ::getpid(), counter++);
}

// Moves a directory out of the way (one rename: readers of the name see it whole or not at all), then
// deletes it. Files a run still maps stay readable until it unmaps them.
void discard(const fs::path& root, const fs::path& dir) {
  std::error_code ec;
  const fs::path trash = root / (kTrashPrefix + dir.filename().string() + "-" + unique_suffix());
  fs::rename(dir, trash, ec);
  fs::remove_all(ec ? dir : trash, ec);
}

Result<json> read_key(const fs::path& dir) {
  auto text = read_whole_file((dir / kCacheKeyFileName).string());
  if (!text) return text.status();
  json key = json::parse(*text, nullptr, false);
  if (key.is_discarded()) return Status::corruption((dir / kCacheKeyFileName).string() + ": not valid JSON");
  return key;
}

// The pid in ".tmp-<name>-<pid>-<n>", or 0.
pid_t pid_of_temp(const std::string& file_name) {
  const auto last = file_name.rfind('-');
  if (last == std::string::npos || last == 0) return 0;
  const auto before = file_name.rfind('-', last - 1);
  if (before == std::string::npos) return 0;
  try {
    return static_cast<pid_t>(std::stol(file_name.substr(before + 1, last - before - 1)));
  } catch (...) {
    return 0;
  }
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::string default_cache_dir() {
  if (const char* dir = std::getenv("CEREBRO_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "cerebro" / "prepared").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "cerebro" / "prepared").string();
  std::error_code ec;
  return (fs::temp_directory_path(ec) / "cerebro-prepared").string();
}

bool is_cacheable(const PrepareOptions& options) { return parse_builtin_source(options.source).has_value(); }

Result<json> cache_key(const PrepareOptions& o) {
  const auto builtin = parse_builtin_source(o.source);
  if (!builtin)
    return Status::invalid_argument(fmt::format("source '{}' is registered by a program and is not cached", o.source));
  json inputs = json::array();
  auto add = [&](const std::string& role, const std::string& path) -> Status {
    auto entry = input_entry(role, path);
    if (!entry) return entry.status();
    inputs.push_back(std::move(*entry));
    return Status::ok_status();
  };
  // Every file below a folder by its path relative to the folder and its content.
  auto add_tree = [&](const std::string& root) -> Status {
    auto files = files_under(root);
    if (!files) return files.status();
    for (const auto& f : *files)
      if (Status s = add(fs::path(f).lexically_relative(root).string(), f); !s.ok()) return s;
    return Status::ok_status();
  };
  auto image_options = [](const ImageOptions& i) {
    return json{{"height", i.height},
                {"width", i.width},
                {"channels", i.channels},
                {"resize", i.resize},
                {"skip_bad", i.skip_bad}};
  };
  json image = nullptr, text = nullptr;
  switch (*builtin) {
    case BuiltinSource::idx:
      for (const auto& [role, path] : {std::pair{"train_images", o.train_images},
                                       {"train_labels", o.train_labels},
                                       {"test_images", o.test_images},
                                       {"test_labels", o.test_labels}})
        if (Status s = add(role, path); !s.ok()) return s;
      break;
    case BuiltinSource::csv:
      if (Status s = add("train", o.train_csv); !s.ok()) return s;
      if (!o.test_csv.empty())
        if (Status s = add("test", o.test_csv); !s.ok()) return s;
      break;
    case BuiltinSource::images: {
      // Every image by its path below the root (its class folder included) and its content; a manifest
      // by its content too (it holds the labels).
      auto listing = list_images(o.images);
      if (!listing) return listing.status();
      std::error_code ec;
      const bool manifest = fs::is_regular_file(o.images.path, ec);
      const fs::path base = manifest ? fs::path(o.images.path).parent_path() : fs::path(o.images.path);
      if (manifest)
        if (Status s = add("manifest", o.images.path); !s.ok()) return s;
      for (const auto* files : {&listing->train, &listing->test})
        for (const auto& f : *files)
          if (Status s = add(fs::path(f.path).lexically_relative(base).string(), f.path); !s.ok()) return s;
      image = image_options(o.images);
      break;
    }
    case BuiltinSource::coco: {
      // The annotations by content, and every file under the image root (images[] names some of them).
      const fs::path base(o.coco.path), annotations(o.coco.annotations), root(o.coco.image_root);
      const std::string annotations_file = (annotations.is_absolute() ? annotations : base / annotations).string();
      if (Status s = add("annotations", annotations_file); !s.ok()) return s;
      const fs::path image_root = o.coco.image_root.empty() ? base : root.is_absolute() ? root : base / root;
      if (Status s = add_tree(image_root.lexically_normal().string()); !s.ok()) return s;
      image = image_options(o.coco.images);
      text = {{"tokenizer", to_string(o.tokenizer.kind)},
              {"min_count", o.tokenizer.min_count},
              {"max_vocab", o.tokenizer.max_vocab}};
      break;
    }
    case BuiltinSource::text:
      if (Status s = add_tree(o.text.path); !s.ok()) return s;
      text = {{"window", o.text.window},
              {"tokenizer", to_string(o.tokenizer.kind)},
              {"min_count", o.tokenizer.min_count},
              {"max_vocab", o.tokenizer.max_vocab}};
      break;
  }
  return json{{"cache_format", kCacheFormat},
              {"manifest_format", kManifestFormatVersion},
              {"source", o.source},
              {"inputs", std::move(inputs)},
              {"label_column", o.label_column},
              // What the labels are read as (and, for regression, which columns): the shards hold class
              // labels or float targets by it.
              {"task", to_string(o.task)},
              {"label_columns", o.label_columns},
              {"image", std::move(image)},
              {"text", std::move(text)},
              {"validation_fraction", o.validation_fraction},
              {"test_fraction", o.test_fraction},
              {"partitions", o.partitions},
              {"limit", o.limit},
              {"seed", o.seed},
              {"normalization", to_string(o.normalization)}};
}

std::string cache_key_name(const json& key) {
  const std::string text = key.dump();
  uint64_t fnv = 1469598103934665603ull;
  for (unsigned char c : text) fnv = (fnv ^ c) * 1099511628211ull;
  return fmt::format("{:016x}{:08x}", fnv, Crc32().update(text).value());
}

PreparedCache::PreparedCache(std::string root) : root_(std::move(root)) {}

Result<CachedData> PreparedCache::find_or_prepare(const PrepareOptions& options,
                                                  const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  auto key = cache_key(options);
  if (!key) return key.status();
  CachedData out;
  out.name = cache_key_name(*key);
  const fs::path root(root_), dir = root / out.name;
  out.dir = dir.string();
  std::error_code ec;
  // An intact entry of this very key, or the reason it is not one.
  auto check = [&]() -> Status {
    auto stored = read_key(dir);
    if (!stored) return stored.status();
    if (*stored != *key)
      return Status::corruption(fmt::format("{}: holds another key", (dir / kCacheKeyFileName).string()));
    return verify_prepared(dir.string());
  };
  auto use = [&]() -> Result<CachedData> {
    auto manifest = read_manifest(dir.string());
    if (!manifest) return manifest.status();
    out.manifest = std::move(*manifest);
    fs::last_write_time(dir / kCacheKeyFileName, fs::file_time_type::clock::now(), ec);  // its last use, for prune
    return out;
  };
  if (fs::exists(dir, ec)) {
    Status intact = check();
    if (intact.ok()) {
      say(fmt::format("prepared data found in the cache: {} (no preparation)", dir.string()));
      return use();
    }
    say(fmt::format("cache entry {} is damaged ({}); preparing it again", out.name, intact.message()));
    discard(root, dir);
    out.repaired = true;
  }

  fs::create_directories(root, ec);
  if (ec) return Status::io_error(fmt::format("{}: cannot create the cache directory: {}", root_, ec.message()));
  const fs::path temp = root / (kTempPrefix + out.name + "-" + unique_suffix());
  struct RemoveTemp {
    fs::path path;
    ~RemoveTemp() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_temp{temp};
  const fs::path staged = temp / "entry";
  auto manifest = prepare(options, staged.string(), progress);
  if (!manifest) return manifest.status();
  if (Status s = write_file_atomically((staged / kCacheKeyFileName).string(), key->dump(2) + "\n"); !s.ok()) return s;
  fs::rename(staged, dir, ec);
  if (ec) {
    // Another process prepared the same entry meanwhile: use theirs when it is intact.
    if (fs::exists(dir, ec) && check().ok()) return use();
    return Status::io_error(
        fmt::format("{}: cannot move the prepared data into the cache: {}", dir.string(), ec.message()));
  }
  if (Status s = fsync_directory(root_); !s.ok()) return s;
  say(fmt::format("prepared into the cache: {}", dir.string()));
  out.prepared = true;
  return use();
}

Result<std::vector<CacheEntry>> PreparedCache::list() const {
  std::vector<CacheEntry> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(ec) || name.empty() || name[0] == '.') continue;
    CacheEntry e;
    e.name = name;
    e.dir = it->path().string();
    e.bytes = directory_bytes(it->path());
    e.last_used_unix = mtime_unix(it->path() / kCacheKeyFileName);
    auto manifest = read_manifest(e.dir);
    auto key = read_key(it->path());
    if (!manifest)
      e.problem = manifest.status().message();
    else if (!key)
      e.problem = key.status().message();
    else if (cache_key_name(*key) != name)
      e.problem = "its key does not match its name";
    if (manifest) {
      e.source = manifest->source;
      e.inputs = manifest->inputs;
      e.partitions = static_cast<int>(manifest->partitions.size());
      e.train_examples = manifest->train_examples;
    }
    out.push_back(std::move(e));
  }
  if (ec) return Status::io_error(fmt::format("{}: cannot list: {}", root_, ec.message()));
  std::sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used_unix != b.last_used_unix ? a.last_used_unix > b.last_used_unix : a.name < b.name;
  });
  return out;
}

Result<std::vector<CacheEntry>> PreparedCache::prune(const PruneRule& rule) {
  auto entries = list();
  if (!entries) return entries.status();
  for (const auto& name : rule.names) {
    if (std::none_of(entries->begin(), entries->end(), [&](const CacheEntry& e) { return e.name == name; }))
      return Status::not_found(fmt::format("{}: no cache entry {}", root_, name));
  }
  std::vector<CacheEntry> removed;
  const int64_t now = now_unix();
  for (const auto& e : *entries) {
    const bool named = std::find(rule.names.begin(), rule.names.end(), e.name) != rule.names.end();
    const bool stale = rule.unused_for_s >= 0 && now - e.last_used_unix >= rule.unused_for_s;
    if (rule.all || named || stale || !e.problem.empty()) {
      discard(root_, e.dir);
      removed.push_back(e);
    }
  }
  // Leftovers: trash, and temporaries of preparations whose process is gone.
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool trash = name.rfind(kTrashPrefix, 0) == 0;
    const bool orphan = name.rfind(kTempPrefix, 0) == 0 && !process_alive(pid_of_temp(name));
    if (trash || orphan) leftovers.push_back(it->path());
  }
  for (const auto& p : leftovers) fs::remove_all(p, ec);
  return removed;
}

}  // namespace cerebro::datasets
