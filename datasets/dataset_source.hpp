#pragma once
// Dataset sources registered by C++ code: `[data] source = "<name>"` in a spec
// makes the ETL take its examples from the registered loader instead of IDX
// or CSV files. Everything after loading (limit, shuffle, splits,
// normalization, shards, checks) is the same as for the built-in sources.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

// What a loader hands to the ETL.
struct SourceData {
  Dataset train;
  // Without a test set the ETL carves test_fraction of `train` off as the
  // test set, as for a CSV source without a test file.
  std::optional<Dataset> test;
  std::vector<std::string> class_names;  // optional: names of label indices 0, 1, ...
  std::vector<std::string> inputs;       // optional: what was read, recorded in the manifest
};

// Called once per prepare (each experiment's ETL) on the preparing thread.
// Returns an error, or throws, to fail the prepare with a message naming the
// source. It may return different data on each call (new data arrived).
using DatasetLoader = std::function<Result<SourceData>()>;

// Registers `loader` under `name`. Thread-safe. Registering a name again
// replaces its loader. Refuses the built-in names ("idx", "csv", "images") and names
// that are not lower-case letters, digits, '_' or '-' (starting with a letter).
Status register_dataset_source(const std::string& name, DatasetLoader loader);

// Removes a registered source; false if it was not registered.
bool unregister_dataset_source(const std::string& name);

// Names of the registered sources, sorted (the built-ins are not listed).
std::vector<std::string> registered_dataset_sources();

// The built-in sources, "idx", "csv", "images", "coco" and "text".
const std::vector<std::string>& builtin_dataset_sources();

// The built-in sources as a kind. A spec and PrepareOptions keep the source's
// name (a registered source is only a name); code that branches on a built-in
// one parses the name once with parse_builtin_source.
// coco: a COCO-format captions or instances file with its images (datasets/coco.hpp); text: plain text cut
// into token windows (datasets/text_source.hpp).
enum class BuiltinSource { idx, csv, images, coco, text };
std::string to_string(BuiltinSource source);
// "idx" | "csv" | "images" | "coco" | "text"; nullopt for any other name (a registered or unknown source).
std::optional<BuiltinSource> parse_builtin_source(const std::string& name);

// True for a built-in or registered source name.
bool is_known_dataset_source(const std::string& name);

// Runs the loader registered as `name` and checks what it returned: a
// non-empty training set, a sample shape of positive sizes, as many feature
// rows as labels, and a test set of the same shape. Errors start with
// "source '<name>': ".
Result<SourceData> load_registered_source(const std::string& name);

}  // namespace cerebro::datasets
