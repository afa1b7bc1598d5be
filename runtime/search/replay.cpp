#include "runtime/search/replay.hpp"

#include <set>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

namespace {

Status check_recorded(const std::vector<SearchDecision>& recorded) {
  std::set<std::pair<ConfigId, int32_t>> seen;
  for (const auto& d : recorded) {
    if (!seen.emplace(d.config, d.epoch).second) {
      return Status::invalid_argument(
          fmt::format("replay: two decisions recorded for config {} after epoch {}", d.config, d.epoch));
    }
  }
  return Status::ok_status();
}

}  // namespace

Result<std::unique_ptr<ReplayDecisions>> ReplayDecisions::create(const std::vector<SearchDecision>& recorded) {
  if (auto checked = check_recorded(recorded); !checked.ok()) return checked;
  return std::make_unique<ReplayDecisions>(recorded);
}

ReplayDecisions::ReplayDecisions(const std::vector<SearchDecision>& recorded) {
  if (auto checked = check_recorded(recorded); !checked.ok()) contract_violation("ReplayDecisions", checked.message());
  for (const auto& d : recorded) recorded_.emplace(EpochKey{d.config, d.epoch}, d);
}

std::vector<SearchDecision> ReplayDecisions::decide(const EpochOutcome& o) {
  epochs_ended_[o.config] = o.epoch + 1;
  std::vector<SearchDecision> out;
  auto it = recorded_.find({o.config, o.epoch});
  if (it == recorded_.end()) {
    out.push_back(SearchDecision::continue_training(o.config, o.epoch, "no decision recorded for this epoch"));
  } else if (it->second.kind == SearchDecision::Kind::exploit) {
    const SearchDecision& d = it->second;
    auto ended = epochs_ended_.find(d.source);
    if (ended != epochs_ended_.end() && ended->second > d.source_epoch) {
      out.push_back(d);
    } else {
      waiting_[{d.source, d.source_epoch}].push_back(d);
    }
  } else {
    out.push_back(it->second);
  }
  // This epoch end may be the state a waiting exploit copies.
  auto released = waiting_.find({o.config, o.epoch});
  if (released != waiting_.end()) {
    out.insert(out.end(), released->second.begin(), released->second.end());
    waiting_.erase(released);
  }
  return out;
}

std::vector<SearchDecision> ReplayDecisions::on_config_ended(ConfigId config) {
  std::vector<SearchDecision> out;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->first.first != config) {
      ++it;
      continue;
    }
    for (const auto& d : it->second) {
      out.push_back(SearchDecision::stop(
          d.config, d.epoch,
          fmt::format("replay diverged from the original: config {} ended before epoch {}, whose state this "
                      "config was to copy",
                      config, d.source_epoch)));
    }
    it = waiting_.erase(it);
  }
  return out;
}

}  // namespace cerebro
