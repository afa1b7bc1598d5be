#include "runtime/search/search_procedure.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

using nlohmann::json;

double metric_score(const EpochOutcome& outcome, SearchMetric metric) {
  const double value = metric_value(metric, outcome.val_loss, outcome.val_accuracy, outcome.val_metrics);
  const double score = metric.higher_is_better() ? value : -value;
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

SearchDecision SearchDecision::continue_training(ConfigId config, int32_t epoch, std::string reason) {
  SearchDecision d;
  d.config = config;
  d.epoch = epoch;
  d.kind = Kind::continue_training;
  d.reason = std::move(reason);
  return d;
}

SearchDecision SearchDecision::stop(ConfigId config, int32_t epoch, std::string reason) {
  SearchDecision d = continue_training(config, epoch, std::move(reason));
  d.kind = Kind::stop;
  return d;
}

SearchDecision SearchDecision::exploit(ConfigId config, int32_t epoch, ConfigId source, int32_t source_epoch,
                                       json params, std::string reason) {
  SearchDecision d = continue_training(config, epoch, std::move(reason));
  d.kind = Kind::exploit;
  d.source = source;
  d.source_epoch = source_epoch;
  d.params = std::move(params);
  return d;
}

bool operator==(const SearchDecision& a, const SearchDecision& b) {
  return a.config == b.config && a.epoch == b.epoch && a.kind == b.kind && a.reason == b.reason &&
         a.source == b.source && a.source_epoch == b.source_epoch && a.params == b.params;
}

namespace {
// The words of the search log's "decision" field.
const std::pair<SearchDecision::Kind, const char*> decision_kind_names[] = {
    {SearchDecision::Kind::continue_training, "continue"},
    {SearchDecision::Kind::stop, "stop"},
    {SearchDecision::Kind::exploit, "exploit"}};
}  // namespace

std::string to_string(SearchDecision::Kind kind) {
  for (const auto& [k, name] : decision_kind_names)
    if (k == kind) return name;
  return "unknown";
}

std::optional<SearchDecision::Kind> parse_search_decision_kind(const std::string& text) {
  for (const auto& [kind, name] : decision_kind_names)
    if (text == name) return kind;
  return std::nullopt;
}

std::string to_string(const SearchDecision& d) {
  std::string out = fmt::format("config {} epoch {}: {}", d.config, d.epoch, to_string(d.kind));
  if (d.kind == SearchDecision::Kind::exploit) {
    out += fmt::format(" config {} (its state after epoch {})", d.source, d.source_epoch);
  }
  if (!d.reason.empty()) out += " (" + d.reason + ")";
  return out;
}

json to_json(const SearchDecision& d) {
  json j = {{"config", d.config}, {"epoch", d.epoch}, {"decision", to_string(d.kind)}, {"reason", d.reason}};
  if (d.kind == SearchDecision::Kind::exploit) {
    j["source"] = d.source;
    j["source_epoch"] = d.source_epoch;
    j["params"] = d.params;
  }
  return j;
}

Result<SearchDecision> search_decision_from_json(const json& j) {
  auto field = [&](const char* key) -> Result<const json*> {
    if (!j.is_object() || !j.contains(key))
      return Status::invalid_argument(fmt::format("search decision {}: missing field '{}'", j.dump(), key));
    return &j.at(key);
  };
  auto integer = [&](const char* key) -> Result<int32_t> {
    auto v = field(key);
    if (!v.ok()) return v.status();
    if (!(*v)->is_number_integer())
      return Status::invalid_argument(fmt::format("search decision {}: '{}' must be an integer", j.dump(), key));
    return (*v)->get<int32_t>();
  };
  SearchDecision d;
  auto config = integer("config");
  if (!config.ok()) return config.status();
  d.config = *config;
  auto epoch = integer("epoch");
  if (!epoch.ok()) return epoch.status();
  d.epoch = *epoch;
  auto kind = field("decision");
  if (!kind.ok()) return kind.status();
  auto reason = field("reason");
  if (!reason.ok()) return reason.status();
  if (!(*reason)->is_string())
    return Status::invalid_argument(fmt::format("search decision {}: 'reason' must be a string", j.dump()));
  d.reason = (*reason)->get<std::string>();
  const auto parsed = (*kind)->is_string() ? parse_search_decision_kind((*kind)->get<std::string>()) : std::nullopt;
  if (!parsed) {
    return Status::invalid_argument(
        fmt::format("search decision {}: 'decision' must be \"continue\", \"stop\" or \"exploit\"", j.dump()));
  }
  d.kind = *parsed;
  if (d.kind == SearchDecision::Kind::exploit) {
    auto source = integer("source");
    if (!source.ok()) return source.status();
    d.source = *source;
    auto source_epoch = integer("source_epoch");
    if (!source_epoch.ok()) return source_epoch.status();
    d.source_epoch = *source_epoch;
    auto params = field("params");
    if (!params.ok()) return params.status();
    d.params = **params;
  }
  return d;
}

EpochDecision SearchProcedure::on_epoch_end(const EpochOutcome& /*outcome*/) {
  return EpochDecision::continue_training;
}

std::vector<SearchDecision> SearchProcedure::decide(const EpochOutcome& outcome) {
  if (on_epoch_end(outcome) == EpochDecision::stop) {
    return {SearchDecision::stop(outcome.config, outcome.epoch, "stopped by the search procedure '" + name() + "'")};
  }
  return {SearchDecision::continue_training(outcome.config, outcome.epoch)};
}

std::vector<SearchDecision> SearchProcedure::on_config_ended(ConfigId /*config*/) { return {}; }

EpochDecision FixedEpochsProcedure::on_epoch_end(const EpochOutcome& /*outcome*/) {
  return EpochDecision::continue_training;
}

}  // namespace cerebro
