#include "runtime/search/tpe_search.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "runtime/base/status.hpp"
#include "runtime/search/search_space.hpp"

namespace cerebro {

namespace {
constexpr double kWorst = -std::numeric_limits<double>::infinity();
}  // namespace

Result<std::unique_ptr<TpeProcedure>> TpeProcedure::create(const nlohmann::json& space, uint64_t seed,
                                                           TpeSearchOptions options) {
  if (options.samples < 1 || options.in_flight < 1 || options.epochs < 1)
    return Status::invalid_argument(fmt::format("tpe: needs samples, in_flight and epochs >= 1, got {}, {} and {}",
                                                options.samples, options.in_flight, options.epochs));
  for (size_t i = 0; i < options.warm.size(); ++i) {
    if (options.warm[i].scores.size() != 1)
      return Status::invalid_argument(
          fmt::format("tpe: warm-start observation {} has {} scores, not 1", i, options.warm[i].scores.size()));
  }
  size_t modelled = 0;
  for (const auto& o : options.objectives) {
    modelled += o.builtin != BuiltinObjective::inference_ms;
    if (o.builtin == BuiltinObjective::parameters && !options.parameters_of)
      return Status::invalid_argument("tpe: the objective parameters needs the run's model builder");
  }
  if (modelled > 1 && !options.warm.empty())
    return Status::invalid_argument(
        "tpe: warm_start with several objectives is not supported (earlier runs give "
        "one score per config)");
  // MOTPE: the good set is not capped (as Optuna).
  if (modelled > 1) options.tpe.gamma_cap = 0;
  auto sampler = TpeSampler::create(space, seed, options.tpe);
  if (!sampler.ok()) return sampler.status();
  std::unique_ptr<TpeProcedure> procedure(new TpeProcedure(std::move(sampler).value(), std::move(options)));
  // The first proposals see the warm observations: a bad one is the spec's.
  if (auto proposed = procedure->propose_while_slots_free(); !proposed.ok()) return proposed;
  return procedure;
}

TpeProcedure::TpeProcedure(TpeSampler sampler, TpeSearchOptions options)
    : sampler_(std::move(sampler)), options_(std::move(options)) {
  if (options_.pruner == TpePruner::none) return;
  // Bracket b starts its rungs at min_epochs * eta^b (asynchronous Hyperband);
  // ASHA is the single bracket b = 0.
  int32_t count = 1;
  if (options_.pruner == TpePruner::hyperband) {
    const auto rungs = asha_rungs(options_.min_epochs, options_.epochs, options_.eta);
    count = static_cast<int32_t>(rungs.size()) + 1;
    if (options_.brackets > 0) count = std::min(count, options_.brackets);
  }
  int64_t first = options_.min_epochs;
  for (int32_t b = 0; b < count; ++b, first *= options_.eta) {
    const auto first_rung = static_cast<int32_t>(std::min<int64_t>(first, options_.epochs));
    brackets_.push_back(
        std::make_unique<AshaProcedure>(AshaOptions{options_.epochs, first_rung, options_.eta, options_.metric}));
  }
}

int TpeProcedure::live() const {
  int n = 0;
  for (const auto& c : configs_) n += c.ended ? 0 : 1;
  return n;
}

size_t TpeProcedure::modelled_objectives() const {
  if (options_.objectives.empty()) return 1;
  size_t n = 0;
  for (const auto& o : options_.objectives) n += o.builtin != BuiltinObjective::inference_ms;
  return n;
}

std::vector<double> TpeProcedure::scores_of(const EpochOutcome& o, const Tracked& c) const {
  if (options_.objectives.empty()) return {metric_score(o, options_.metric)};
  std::vector<double> out;
  for (const auto& objective : options_.objectives) {
    if (objective.metric)
      out.push_back(metric_score(o, *objective.metric));
    else if (objective.builtin == BuiltinObjective::parameters)
      out.push_back(-c.parameters);
    else if (objective.builtin == BuiltinObjective::train_seconds)
      out.push_back(-o.train_seconds);
  }
  return out;
}

std::vector<int32_t> TpeProcedure::levels() const {
  std::set<int32_t> out{options_.epochs};
  for (const auto& bracket : brackets_)
    for (int32_t rung : bracket->rungs()) out.insert(rung);
  return {out.begin(), out.end()};
}

void TpeProcedure::end(ConfigId config) {
  if (config < 0 || config >= static_cast<ConfigId>(configs_.size())) return;
  configs_[static_cast<size_t>(config)].ended = true;
}

Status TpeProcedure::propose_while_slots_free() {
  while (live() < options_.in_flight && static_cast<int>(configs_.size()) < options_.samples) {
    // The level to fit at: the highest with `startup` scores, else the lowest.
    const auto all_levels = levels();
    int32_t level = all_levels.front();
    if (options_.pruner != TpePruner::none) {
      for (auto it = all_levels.rbegin(); it != all_levels.rend(); ++it) {
        int64_t scored = 0;
        for (const auto& c : configs_) scored += c.scores.count(*it);
        if (scored >= options_.tpe.startup) {
          level = *it;
          break;
        }
      }
    } else {
      level = options_.epochs;
    }
    std::vector<TpeObservation> observations = options_.warm;
    std::vector<nlohmann::json> pending;
    const std::vector<double> worst(modelled_objectives(), kWorst);
    for (const auto& c : configs_) {
      if (options_.pruner == TpePruner::none) {
        if (!c.ended)
          pending.push_back(c.params);
        else
          observations.push_back({c.params, c.scores.empty() ? worst : c.scores.rbegin()->second});
        continue;
      }
      auto at = c.scores.find(level);
      if (at != c.scores.end())
        observations.push_back({c.params, at->second});
      else if (c.ended)
        observations.push_back({c.params, worst});
      else
        pending.push_back(c.params);
    }
    auto proposal = sampler_.propose(observations, pending);
    if (!proposal.ok()) return proposal.status().with_context("tpe");
    const auto id = static_cast<ConfigId>(configs_.size());
    std::string reason;
    if (proposal->startup) {
      reason = fmt::format("random startup draw: {} of the {} finished configs the model starts with",
                           observations.size(), options_.tpe.startup);
    } else {
      model_level_ = level;
      reason = fmt::format("TPE over {} finished configs at {} epochs, {} running", observations.size(), level,
                           pending.size());
    }
    Tracked tracked{proposal->params, {}, false, 0};
    for (const auto& o : options_.objectives) {
      if (o.builtin != BuiltinObjective::parameters) continue;
      auto count = options_.parameters_of(proposal->params);
      // A config whose model cannot be built fails its pilot check anyway.
      tracked.parameters = count.ok() ? *count : std::numeric_limits<double>::infinity();
    }
    configs_.push_back(std::move(tracked));
    proposals_.push_back(ConfigProposal{id, std::move(proposal->params), options_.epochs, std::move(reason)});
  }
  return Status::ok_status();
}

std::vector<SearchDecision> TpeProcedure::decide(const EpochOutcome& o) {
  if (o.config < 0 || o.config >= static_cast<ConfigId>(configs_.size()))
    contract_violation("TpeProcedure",
                       fmt::format("tpe: decision asked for config {}, which it did not propose", o.config));
  auto& tracked = configs_[static_cast<size_t>(o.config)];
  const int32_t trained = o.epoch + 1;
  tracked.scores[trained] = scores_of(o, tracked);
  std::vector<SearchDecision> decisions;
  if (brackets_.empty()) {
    decisions.push_back(SearchDecision::continue_training(o.config, o.epoch));
  } else {
    const auto& bracket = brackets_[static_cast<size_t>(o.config) % brackets_.size()];
    decisions = bracket->decide(o);
  }
  const bool stopped = !decisions.empty() && decisions.front().kind == SearchDecision::Kind::stop;
  if (stopped || trained >= options_.epochs) {
    end(o.config);
    keep_proposing();
  }
  return decisions;
}

std::vector<SearchDecision> TpeProcedure::on_config_ended(ConfigId config) {
  end(config);
  keep_proposing();
  return {};
}

void TpeProcedure::keep_proposing() {
  // create() checked the space, the options and the warm observations with
  // the first proposals; what the model sees since are its own proposals,
  // drawn inside the space, and their scores. A failure now is this class's bug.
  if (auto proposed = propose_while_slots_free(); !proposed.ok())
    contract_violation("TpeProcedure", proposed.message());
}

std::vector<ConfigProposal> TpeProcedure::take_proposals() {
  std::vector<ConfigProposal> out;
  out.swap(proposals_);
  return out;
}

void TpeProcedure::use_recorded_params(ConfigId config, const nlohmann::json& params) {
  if (config >= 0 && config < static_cast<ConfigId>(configs_.size()))
    configs_[static_cast<size_t>(config)].params = params;
}

}  // namespace cerebro
