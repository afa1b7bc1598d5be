#include "runtime/search/hyperband.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

Result<std::unique_ptr<HyperbandProcedure>> HyperbandProcedure::create(HyperbandOptions options,
                                                                       std::vector<ConfigId> configs) {
  auto brackets = hyperband_brackets(options.max_epochs, options.eta, options.brackets);
  if (!brackets.ok()) return brackets.status();
  int64_t needed = 0;
  for (const auto& b : *brackets) needed += b.sizes.front();
  if (static_cast<int64_t>(configs.size()) != needed) {
    return Status::invalid_argument(fmt::format("hyperband: max_epochs {} and eta {} need {} configs, got {}",
                                                options.max_epochs, options.eta, needed, configs.size()));
  }
  std::unique_ptr<HyperbandProcedure> procedure(new HyperbandProcedure(options, std::move(brackets).value()));
  size_t next = 0;
  for (size_t b = 0; b < procedure->brackets_.size(); ++b) {
    BracketState state;
    state.reached.assign(procedure->brackets_[b].sizes.size(), 0);
    for (int32_t i = 0; i < procedure->brackets_[b].sizes.front(); ++i, ++next) {
      if (!procedure->bracket_of_.emplace(configs[next], b).second)
        return Status::invalid_argument(fmt::format("hyperband: config {} is given twice", configs[next]));
      state.racing.insert(configs[next]);
    }
    procedure->states_.push_back(std::move(state));
  }
  return procedure;
}

HyperbandProcedure::HyperbandProcedure(HyperbandOptions options, std::vector<HyperbandBracket> brackets)
    : options_(options), brackets_(std::move(brackets)) {}

size_t HyperbandProcedure::bracket_of(ConfigId config) const {
  auto it = bracket_of_.find(config);
  if (it == bracket_of_.end())
    contract_violation("HyperbandProcedure", fmt::format("hyperband: config {} is in no bracket", config));
  return it->second;
}

std::vector<SearchDecision> HyperbandProcedure::decide(const EpochOutcome& o) {
  const size_t b = bracket_of(o.config);
  const HyperbandBracket& bracket = brackets_[b];
  BracketState& state = states_[b];
  const int32_t trained = o.epoch + 1;
  if (trained >= options_.max_epochs) {
    ++state.reached.back();
    return {SearchDecision::continue_training(
        o.config, o.epoch, fmt::format("reached max_epochs {} in bracket s={}", options_.max_epochs, bracket.s))};
  }
  if (trained != bracket.epochs[state.rung]) return {SearchDecision::continue_training(o.config, o.epoch)};
  if (!state.racing.count(o.config) || state.arrived.count(o.config)) {
    // ExperimentControl reports each config's epoch ends once, in order.
    contract_violation(
        "HyperbandProcedure",
        fmt::format("hyperband: config {} reached rung {} epochs of bracket s={} but is not racing there", o.config,
                    trained, bracket.s));
  }
  state.arrived[o.config] = metric_score(o, options_.metric);
  ++state.reached[state.rung];
  return close_rung_if_complete(b);  // empty: the config waits for the rest of its bracket
}

std::vector<SearchDecision> HyperbandProcedure::on_config_ended(ConfigId config) {
  auto it = bracket_of_.find(config);
  if (it == bracket_of_.end()) return {};
  const size_t b = it->second;
  BracketState& state = states_[b];
  if (!state.racing.erase(config)) return {};
  state.arrived.erase(config);
  return close_rung_if_complete(b);
}

std::vector<SearchDecision> HyperbandProcedure::close_rung_if_complete(size_t b) {
  const HyperbandBracket& bracket = brackets_[b];
  BracketState& state = states_[b];
  if (state.arrived.empty() || state.arrived.size() != state.racing.size()) return {};
  std::vector<std::pair<double, ConfigId>> ranked;
  for (const auto& [config, score] : state.arrived) ranked.emplace_back(score, config);
  // Best first; equal scores in config order, so the outcome never depends on arrival order.
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(bracket.sizes[state.rung + 1]));
  const int32_t epoch = bracket.epochs[state.rung] - 1;
  std::vector<SearchDecision> out;
  std::set<ConfigId> promoted;
  for (size_t i = 0; i < ranked.size(); ++i) {
    const ConfigId c = ranked[i].second;
    const std::string where = fmt::format("rank {} of {} at rung {} epochs of bracket s={}, which keeps {}", i + 1,
                                          ranked.size(), bracket.epochs[state.rung], bracket.s, keep);
    if (i < keep) {
      promoted.insert(c);
      out.push_back(SearchDecision::continue_training(c, epoch, "promoted: " + where));
    } else {
      out.push_back(SearchDecision::stop(c, epoch, "not promoted: " + where));
    }
  }
  state.racing = std::move(promoted);
  state.arrived.clear();
  ++state.rung;
  return out;
}

}  // namespace cerebro
