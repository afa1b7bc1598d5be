#pragma once
// Population based training (Jaderberg et al., "Population Based Training of
// Neural Networks", 2017), asynchronous like the paper's: each member decides
// when its own epoch ends, against the latest scores of the others.
//
// The population is the configs. Every `ready` epochs of a member (and not
// after its last), it is ranked among the members that have a score (each
// member's latest validation; a member that diverged or failed is out). If it
// is in the bottom `exploit_fraction`, it exploits: it takes the weights,
// buffers and optimizer state of a member drawn uniformly from the top
// `exploit_fraction` (the state that member had at the end of its scored
// epoch) together with that member's hyper-parameters, and explores: each
// perturbed hyper-parameter is multiplied by a factor drawn uniformly from
// `perturb`, kept within its range in [space] (integers rounded). The top and
// bottom sets hold max(1, floor(members * exploit_fraction)) members each.
// ExperimentControl turns the exploit decision into a StateCopy the shell
// executes before the member trains again. Until its next evaluation the
// member is not ranked (its old score no longer describes its weights).

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/search/search_procedure.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/base/status.hpp"
#include "runtime/spec/perturb_ranges.hpp"

namespace cerebro {

struct PbtOptions {
  int32_t epochs = 1;              // planned epochs per member
  int32_t ready = 1;               // epochs between exploit/explore steps
  double exploit_fraction = 0.25;  // (0, 0.5]
  std::vector<double> perturb = {0.8, 1.2};
  std::map<std::string, PerturbRange> ranges;  // the hyper-parameters to perturb
  SearchMetric metric = SearchMetric::val_accuracy;
  uint64_t seed = 0;  // the draws of sources and factors
};

class PbtProcedure : public SearchProcedure {
 public:
  // invalid_argument for options out of range or duplicate config ids.
  static Status check(const PbtOptions& options, const std::vector<ConfigParams>& population);
  static Result<std::unique_ptr<PbtProcedure>> create(PbtOptions options, const std::vector<ConfigParams>& population);
  // For options and a population that pass check(): others are a contract violation.
  PbtProcedure(PbtOptions options, const std::vector<ConfigParams>& population);

  std::string name() const override { return "pbt"; }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;
  std::vector<SearchDecision> on_config_ended(ConfigId config) override;

  // The member's current hyper-parameters (changed by each exploit); a
  // contract violation for a config outside the population.
  const nlohmann::json& params(ConfigId config) const;
  // `params` with every perturbed key multiplied by a drawn factor and kept in
  // range; uses (and advances) the procedure's generator.
  nlohmann::json perturbed(const nlohmann::json& params);

 private:
  struct Score {
    double value;
    int32_t epoch;  // the epoch whose end state it scored
  };
  uint64_t draw_below(uint64_t n);

  PbtOptions options_;
  std::map<ConfigId, nlohmann::json> params_;
  std::map<ConfigId, Score> latest_;  // members with a current score
  std::mt19937_64 rng_;
};

}  // namespace cerebro
