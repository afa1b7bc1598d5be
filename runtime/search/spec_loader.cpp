#include "runtime/search/spec_loader.hpp"

#include "runtime/search/search_registry.hpp"

namespace cerebro {

Result<ExperimentSpec> parse_spec_file(const std::string& path) { return parse_spec_file_with(path, search_checks()); }

Result<ExperimentSpec> parse_spec_string(const std::string& toml_text, const std::string& spec_dir,
                                         const std::string& origin) {
  return parse_spec_string_with(toml_text, spec_dir, origin, search_checks());
}

}  // namespace cerebro
