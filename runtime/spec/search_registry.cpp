#include "runtime/spec/search_registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"
#include "runtime/spec/hyperband_brackets.hpp"
#include "runtime/spec/perturb_ranges.hpp"
#include "runtime/spec/param_value.hpp"

namespace cerebro {
namespace {

void check_random(ExperimentKeys& s, ExperimentSpec&) {
  if (!s.has("samples")) {
    s.missing("samples", "search = \"random\" needs the number of configs to sample, e.g. samples = 8");
  }
}

// asha and hyperband train a config for at most max_epochs, in rungs.
void check_rungs(ExperimentKeys& s, ExperimentSpec& spec, int example_max_epochs) {
  const std::string search = to_string(spec.search);
  if (!s.has("max_epochs")) {
    s.missing("max_epochs", fmt::format("search = \"{}\" needs R, the most epochs a config trains, e.g. "
                                        "max_epochs = {}",
                                        search, example_max_epochs));
  }
  if (s.has("epochs")) {
    s.report("epochs", fmt::format("does not apply to search = \"{}\": each config trains at most max_epochs "
                                   "epochs (give max_epochs instead)",
                                   search));
  }
}

void check_asha(ExperimentKeys& s, ExperimentSpec& spec) {
  if (!s.has("samples")) {
    s.missing("samples", "search = \"asha\" needs the number of configs to sample, e.g. samples = 27");
  }
  check_rungs(s, spec, 9);
  if (spec.max_epochs < 1) return;
  spec.epochs = spec.max_epochs;
  if (spec.min_epochs > spec.max_epochs) {
    s.report("min_epochs", fmt::format("must be <= max_epochs ({}), got {}", spec.max_epochs, spec.min_epochs));
  }
}

void check_hyperband(ExperimentKeys& s, ExperimentSpec& spec) {
  check_rungs(s, spec, 81);
  if (spec.max_epochs < 1) return;
  spec.epochs = spec.max_epochs;
  const auto max_brackets = hyperband_max_brackets(spec.max_epochs, spec.eta);
  if (!max_brackets.ok()) return;  // eta < 2: its own check reported it
  const int32_t all = *max_brackets;
  if (spec.brackets > all) {
    s.report("brackets", fmt::format("must be <= {}: max_epochs {} and eta {} give {} brackets, got {}", all,
                                     spec.max_epochs, spec.eta, all, spec.brackets));
  } else if (const auto n = hyperband_config_count(spec.max_epochs, spec.eta, spec.brackets);
             n.ok() && *n > kMaxConfigs) {
    s.report("max_epochs", fmt::format("{} with eta {} makes hyperband start {} configs, more than {}: lower "
                                       "max_epochs, raise eta or set fewer brackets",
                                       spec.max_epochs, spec.eta, *n, kMaxConfigs));
  }
}

void check_pbt(ExperimentKeys& s, ExperimentSpec& spec) {
  if (!s.has("population")) {
    s.missing("population", "search = \"pbt\" needs the number of configs in the population, e.g. population = 8");
  }
  if (spec.ready < spec.epochs) return;
  if (s.has("ready")) {
    s.report("ready", fmt::format("must be less than epochs ({}): PBT exploits between a member's epochs, never "
                                  "after its last",
                                  spec.epochs));
  } else {
    s.report("epochs", fmt::format("must be more than ready ({}) for search = \"pbt\": PBT exploits between a "
                                   "member's epochs, never after its last",
                                   spec.ready));
  }
}

// PBT perturbs hyper-parameters of the [space].
void check_pbt_space(ExperimentKeys& s, const ExperimentSpec& spec) {
  auto ranges = perturb_ranges(spec.space, spec.perturb_keys);
  if (!ranges.ok()) s.report_message("perturb_keys", ranges.error());
}

void check_tpe(ExperimentKeys& s, ExperimentSpec& spec) {
  if (!s.has("samples")) {
    s.missing("samples", "search = \"tpe\" needs the number of configs to propose, e.g. samples = 30");
  }
  size_t modelled = 0;
  for (const auto& o : spec.objectives) modelled += o.builtin != BuiltinObjective::inference_ms;
  if (modelled > 1 && !spec.warm_start.empty())
    s.report("warm_start",
             "does not combine with several objectives for search = \"tpe\" (earlier runs give one "
             "score per config)");
  if (spec.pruner == Pruner::none) {
    for (const char* key : {"max_epochs", "min_epochs", "eta", "brackets"}) {
      if (s.has(key))
        s.report(key, "applies to search = \"tpe\" only with a pruner (pruner = \"asha\" or \"hyperband\")");
    }
    return;
  }
  if (spec.pruner == Pruner::asha && s.has("brackets")) s.report("brackets", "applies only to pruner = \"hyperband\"");
  check_rungs(s, spec, 9);
  if (spec.max_epochs < 1) return;
  spec.epochs = spec.max_epochs;
  if (spec.min_epochs > spec.max_epochs) {
    s.report("min_epochs", fmt::format("must be <= max_epochs ({}), got {}", spec.max_epochs, spec.min_epochs));
  }
}

// TPE models each hyper-parameter; a space whose every key has one value
// leaves nothing to model, and a space of lists only with fewer combinations
// than samples is a grid (every combination would be tried anyway).
void check_tpe_space(ExperimentKeys& s, const ExperimentSpec& spec) {
  int64_t combinations = 1;
  bool lists_only = true;
  for (auto it = spec.space.begin(); it != spec.space.end(); ++it) {
    const auto& v = it.value();
    if (v.is_array()) {
      combinations =
          std::min<int64_t>(combinations * static_cast<int64_t>(std::max<size_t>(1, v.size())), kMaxConfigs + 1);
    } else if (distribution_of(v) == Distribution::choice && v.contains("values") && v["values"].is_array()) {
      combinations = std::min<int64_t>(combinations * static_cast<int64_t>(std::max<size_t>(1, v["values"].size())),
                                       kMaxConfigs + 1);
    } else if (v.is_object()) {
      lists_only = false;
    }
  }
  if (!lists_only) return;
  if (combinations <= 1) {
    s.report_message("search",
                     "[experiment] search = \"tpe\": the [space] has one value per hyper-parameter, so "
                     "there is nothing to search: give a list of several values or a distribution "
                     "(e.g. lr = { dist = \"loguniform\", low = 1e-4, high = 1e-1 })");
  } else if (combinations < spec.samples) {
    s.report_message("samples", fmt::format("[experiment] samples = {} but the [space] (lists only) has {} "
                                            "combinations: use search = \"grid\" to try each once, or give "
                                            "distributions for tpe to model",
                                            spec.samples, combinations));
  }
}

// The searches that accept `key`, in registry order.
std::vector<std::string> searches_accepting(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& info : search_registry()) {
    if (std::find(info.keys.begin(), info.keys.end(), key) != info.keys.end()) names.push_back(to_string(info.kind));
  }
  return names;
}

void check_experiment(ExperimentKeys& s, ExperimentSpec& spec) {
  const SearchInfo& info = search_info(spec.search);
  for (const auto& key : search_specific_keys()) {
    if (!s.has(key) || std::find(info.keys.begin(), info.keys.end(), key) != info.keys.end()) continue;
    const auto hint = info.misplaced_key_hints.find(key);
    s.report(key, fmt::format("applies only to search = {}{}", quoted_alternatives(searches_accepting(key)),
                              hint == info.misplaced_key_hints.end() ? "" : hint->second));
  }
  if (info.check_experiment) info.check_experiment(s, spec);
  if (s.has("warm_start") && spec.search == SearchKind::grid)
    s.report("warm_start",
             "does not apply to search = \"grid\", which tries every combination anyway (warm start "
             "seeds random, asha, hyperband, pbt and tpe)");
}

}  // namespace

const std::vector<SearchInfo>& search_registry() {
  static const std::vector<SearchInfo> table = [] {
    std::vector<SearchInfo> t;
    t.push_back({SearchKind::grid,
                 "every combination of the [space] lists, each config for `epochs` epochs",
                 {},
                 {{"samples", " (a grid tries every combination)"}},
                 /*samples_space=*/false,
                 /*takes_added_configs=*/true,
                 nullptr,
                 nullptr});
    t.push_back({SearchKind::random,
                 "`samples` configs drawn from the [space], each for `epochs` epochs",
                 {"samples"},
                 {},
                 true,
                 true,
                 check_random,
                 nullptr});
    t.push_back({SearchKind::asha,
                 "asynchronous successive halving: `samples` configs promoted through rungs "
                 "from min_epochs to max_epochs by a factor eta",
                 {"samples", "max_epochs", "eta", "min_epochs"},
                 {},
                 true,
                 false,
                 check_asha,
                 nullptr});
    t.push_back({SearchKind::hyperband,
                 "brackets of successive halving up to max_epochs; the number of configs "
                 "follows from max_epochs, eta and brackets",
                 {"max_epochs", "eta", "brackets"},
                 {{"samples", " (hyperband derives the number of configs from max_epochs and eta)"}},
                 true,
                 false,
                 check_hyperband,
                 nullptr});
    t.push_back({SearchKind::pbt,
                 "population based training: every `ready` epochs the bottom members copy the "
                 "top ones and perturb their hyper-parameters",
                 {"population", "ready", "exploit_fraction", "perturb", "perturb_keys"},
                 {{"samples", " (pbt samples `population` configs)"}},
                 true,
                 false,
                 check_pbt,
                 check_pbt_space});
    t.push_back({SearchKind::tpe,
                 "Tree-structured Parzen Estimator: `samples` configs proposed one by one as "
                 "workers free, each from a model of the finished ones; optional pruner asha or hyperband",
                 {"samples", "startup", "candidates", "gamma", "prior_weight", "in_flight", "pruner", "max_epochs",
                  "min_epochs", "eta", "brackets"},
                 {},
                 true,
                 false,
                 check_tpe,
                 check_tpe_space});
    return t;
  }();
  return table;
}

const SearchInfo& search_info(SearchKind kind) {
  for (const auto& info : search_registry()) {
    if (info.kind == kind) return info;
  }
  contract_violation("search_info", "search kind missing from the search registry: " + to_string(kind));
}

const SearchChecks& search_checks() {
  static const SearchChecks checks{check_experiment, [](SearchKind kind) { return search_info(kind).samples_space; },
                                   [](ExperimentKeys& s, const ExperimentSpec& spec) {
                                     if (const auto& check = search_info(spec.search).check_space) check(s, spec);
                                   }};
  return checks;
}

}  // namespace cerebro
