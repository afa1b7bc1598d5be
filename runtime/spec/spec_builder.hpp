#pragma once
// Builds an experiment spec in code, for programs that embed cerebro. The
// builder writes the same TOML a spec file would hold and parses it with
// parse_spec_string, so a built spec is checked exactly like a file (every
// problem reported together) and its source_text can be stored and replayed.
//
//   auto spec = SpecBuilder("churn")
//                   .data_source("warehouse").limit(2000)
//                   .epochs(3).workers(2)
//                   .space("model", {"mlp"})
//                   .space("lr", {1e-3, 1e-2})
//                   .build();

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/spec/spec.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

class SpecBuilder {
 public:
  // `name` is [experiment] name.
  explicit SpecBuilder(std::string name);

  // [experiment]
  SpecBuilder& epochs(int epochs);
  SpecBuilder& seed(uint64_t seed);
  SpecBuilder& metric(const std::string& metric);     // val_accuracy | val_loss
  SpecBuilder& search(const std::string& procedure);  // grid | random | asha | hyperband | pbt
  SpecBuilder& samples(int samples);                  // random, asha

  // [data]
  SpecBuilder& data_source(const std::string& source);  // idx | csv | a registered source
  SpecBuilder& limit(int64_t examples);
  SpecBuilder& partitions(int partitions);
  SpecBuilder& validation_fraction(double fraction);

  // [cluster]
  SpecBuilder& workers(int workers);

  // [space]: the values a hyper-parameter takes, space("lr", {1e-3, 1e-2}).
  SpecBuilder& space(const std::string& key, std::vector<nlohmann::json> values);
  // [space]: one value, or a distribution object for the sampling searches
  // (docs/SPEC.md), e.g. {{"dist", "loguniform"}, {"low", 1e-4}, {"high", 1e-1}}.
  SpecBuilder& space_value(const std::string& key, const nlohmann::json& value);

  // Any other key of a section ("experiment", "data", "cluster"), e.g.
  // set("data", "path", "/data/fashion") or set("experiment", "max_epochs", 9).
  // The value must be a JSON scalar, array or object TOML can hold.
  SpecBuilder& set(const std::string& section, const std::string& key, const nlohmann::json& value);

  // The spec as TOML text.
  std::string toml() const;

  // Parses toml() as the spec file "<name>.toml" in `base_dir` (relative data
  // paths resolve against it; "" = the current directory).
  Result<ExperimentSpec> build(const std::string& base_dir = "") const;

 private:
  std::string name_;
  nlohmann::json sections_;  // section -> key -> value, written in this order
};

}  // namespace cerebro
