#pragma once
// Parsing a spec completely: the spec layer's parser (runtime/spec/spec.hpp)
// with the search registry's checks (search_registry.hpp). Every caller that
// turns TOML into an ExperimentSpec goes through these two.

#include <string>

#include "runtime/base/status.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

// Reads and parses a spec file. Messages start with `path` as given, e.g.
// "fashion.toml:7:1: unknown key 'lrr' in [experiment]". Several problems are
// reported together, one per line, in file order.
Result<ExperimentSpec> parse_spec_file(const std::string& path);

// Parses TOML text. Relative data paths and .pt models are resolved against
// spec_dir (against the current directory when spec_dir is ""). `origin`
// prefixes messages (e.g. the file name); its stem is the default name when it
// ends in ".toml", otherwise the default name is "experiment".
Result<ExperimentSpec> parse_spec_string(const std::string& toml_text, const std::string& spec_dir,
                                         const std::string& origin);

}  // namespace cerebro
