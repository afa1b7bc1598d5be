#pragma once
// Prepare once, train many times: a content-addressed cache of prepared datasets (manifest + shards), shared
// by every run, the REPL and the coordinator on a machine. An entry is keyed by the checksums of the source
// files and every preparation parameter (splits, partitions, limit, normalisation, seed, image options), so
// a second experiment on the same data finds its partitions ready and stores no second copy, while a
// changed file or parameter gets an entry of its own.
//
// Layout: <root>/<24 hex digits>/{manifest.json, part-*.bin, validation.bin, test.bin, key.json}. key.json
// holds the full key document and is compared on every hit (the hex name is only its hash). An entry
// appears by one rename of a complete directory, so readers never see half of one; entries are never
// modified in place (a damaged one is moved aside and prepared anew), so a run that mapped the old files
// keeps reading them. Thread- and process-safe: two preparers of one key both succeed, one entry stays.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/manifest.hpp"
#include "datasets/prepare.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

inline constexpr const char* kCacheKeyFileName = "key.json";

// $CEREBRO_CACHE_DIR, else $XDG_CACHE_HOME/cerebro/prepared, else $HOME/.cache/cerebro/prepared
// (else a directory under the system's temporary directory).
std::string default_cache_dir();

// Built-in sources are cached; a source registered by C++ code is not (its loader has no files to key by).
bool is_cacheable(const PrepareOptions& options);

// The key document: the cache format, the source, every input file (its role or path relative to the
// image root, size and crc32, read in full) and every preparation parameter. Errors name a missing or
// unreadable input file.
Result<nlohmann::json> cache_key(const PrepareOptions& options);

// The entry directory name of a key document: 24 hex digits (64-bit FNV-1a and crc32 of its text).
std::string cache_key_name(const nlohmann::json& key);

struct CachedData {
  std::string dir;   // the entry's directory
  std::string name;  // its key name
  Manifest manifest;
  bool prepared = false;  // false: found ready and intact in the cache
  bool repaired = false;  // a damaged entry was found and prepared again
};

struct CacheEntry {
  std::string name, dir;
  std::string source;
  std::vector<std::string> inputs;
  int64_t bytes = 0;  // on disk
  int partitions = 0;
  int64_t train_examples = 0;
  int64_t last_used_unix = 0;  // seconds since the epoch
  std::string problem;         // non-empty: unreadable (its manifest or key), to be pruned
};

struct PruneRule {
  bool all = false;
  int64_t unused_for_s = -1;       // >= 0: entries not used for at least this long
  std::vector<std::string> names;  // these entries
};

class PreparedCache {
 public:
  explicit PreparedCache(std::string root);
  const std::string& root() const { return root_; }

  // The entry for `options`: found (every shard's checksum verified, its last use recorded) or prepared
  // into the cache. A damaged entry (a checksum that does not match, a missing file, an unreadable
  // manifest) is reported through `progress`, set aside and prepared again. `progress` gets short lines.
  Result<CachedData> find_or_prepare(const PrepareOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

  // The entries, most recently used first (a missing root: none).
  Result<std::vector<CacheEntry>> list() const;

  // Removes the entries the rule selects, and always the leftovers of interrupted preparations and
  // entries that cannot be read. Returns what was removed.
  Result<std::vector<CacheEntry>> prune(const PruneRule& rule);

 private:
  std::string root_;
};

}  // namespace cerebro::datasets
