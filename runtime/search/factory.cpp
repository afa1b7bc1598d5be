#include "runtime/search/factory.hpp"

#include <fmt/format.h>

#include "runtime/spec/param_value.hpp"
#include "runtime/search/asha.hpp"
#include "runtime/search/hyperband.hpp"
#include "runtime/search/pbt.hpp"
#include "runtime/search/tpe_search.hpp"

namespace cerebro {

namespace {

// PBT's draws must not repeat the stream sample_random drew the configs from.
constexpr uint64_t kPbtSeedSalt = 0x7062742d64726177ULL;  // "pbt-draw"

}  // namespace

Result<std::unique_ptr<SearchProcedure>> make_search_procedure(const ExperimentSpec& spec,
                                                               const std::vector<ConfigParams>& configs,
                                                               const SearchSetup& setup) {
  const SearchMetric metric = spec.metric;
  // The parser checked every value; a procedure refusing one names it still.
  const auto context = fmt::format("[experiment] search = \"{}\"", to_string(spec.search));
  switch (spec.search) {
    case SearchKind::grid:
    case SearchKind::random: return std::unique_ptr<SearchProcedure>(std::make_unique<FixedEpochsProcedure>());
    case SearchKind::asha: {
      auto made = AshaProcedure::create(AshaOptions{spec.max_epochs, spec.min_epochs, spec.eta, metric});
      if (!made.ok()) return made.status().with_context(context);
      return std::unique_ptr<SearchProcedure>(std::move(made).value());
    }
    case SearchKind::hyperband: {
      const auto needed = hyperband_config_count(spec.max_epochs, spec.eta, spec.brackets);
      if (!needed.ok()) return needed.status().with_context(context);
      if (static_cast<int64_t>(configs.size()) != *needed) {
        return Status::invalid_argument(
            fmt::format("[experiment] search = \"hyperband\" needs {} configs for max_epochs {} and eta {}, got {}",
                        *needed, spec.max_epochs, spec.eta, configs.size()));
      }
      std::vector<ConfigId> ids;
      for (const auto& c : configs) ids.push_back(c.id);
      auto made = HyperbandProcedure::create(HyperbandOptions{spec.max_epochs, spec.eta, spec.brackets, metric},
                                             std::move(ids));
      if (!made.ok()) return made.status().with_context(context);
      return std::unique_ptr<SearchProcedure>(std::move(made).value());
    }
    case SearchKind::pbt: {
      auto ranges = perturb_ranges(spec.space, spec.perturb_keys);
      if (!ranges.ok()) return ranges.status();
      PbtOptions options;
      options.epochs = spec.epochs;
      options.ready = spec.ready;
      options.exploit_fraction = spec.exploit_fraction;
      options.perturb = spec.perturb;
      options.ranges = std::move(ranges).value();
      options.metric = metric;
      options.seed = spec.seed ^ kPbtSeedSalt;
      auto made = PbtProcedure::create(std::move(options), configs);
      if (!made.ok()) return made.status().with_context(context);
      return std::unique_ptr<SearchProcedure>(std::move(made).value());
    }
    case SearchKind::tpe: {
      TpeSearchOptions options;
      options.samples = spec.samples;
      options.in_flight = spec.in_flight > 0 ? spec.in_flight : std::max(1, setup.default_in_flight);
      options.epochs = spec.epochs;
      options.min_epochs = spec.min_epochs;
      options.eta = spec.eta;
      options.brackets = spec.brackets;
      options.pruner = spec.pruner;
      options.metric = metric;
      options.tpe.startup = spec.startup;
      options.tpe.candidates = spec.candidates;
      options.tpe.gamma_fraction = spec.gamma;
      options.tpe.prior_weight = spec.prior_weight;
      options.warm = setup.warm;
      options.objectives = spec.objectives;
      options.parameters_of = setup.parameters_of;
      auto made = TpeProcedure::create(spec.space, spec.seed, std::move(options));
      if (!made.ok()) return made.status().with_context("[experiment] search = \"tpe\"");
      return std::unique_ptr<SearchProcedure>(std::move(made).value());
    }
  }
  return Status::invalid_argument(fmt::format("[experiment] search must be {}, got kind {}",
                                              quoted_alternatives(search_names()), static_cast<int>(spec.search)));
}

}  // namespace cerebro
