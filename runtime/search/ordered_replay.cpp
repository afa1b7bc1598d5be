#include "runtime/search/ordered_replay.hpp"

#include <algorithm>

namespace cerebro {

OrderedReplay::OrderedReplay(std::unique_ptr<SearchProcedure> procedure, std::vector<RecordedEpochEnd> original_order)
    : procedure_(std::move(procedure)) {
  for (auto& e : original_order) {
    recorded_seconds_[{e.config, e.epoch}] = e.train_seconds;
    remaining_.insert({e.config, e.epoch});
    order_.push_back(std::move(e));
  }
}

bool OrderedReplay::expected_later(ConfigId config) const {
  return std::any_of(order_.begin(), order_.end(), [&](const RecordedEpochEnd& e) { return e.config == config; });
}

std::vector<SearchDecision> OrderedReplay::forward_decide(EpochOutcome outcome) {
  auto seconds = recorded_seconds_.find({outcome.config, outcome.epoch});
  if (seconds != recorded_seconds_.end()) outcome.train_seconds = seconds->second;
  auto decisions = procedure_->decide(outcome);
  for (const auto& d : decisions) {
    auto planned = planned_epochs_.find(d.config);
    const bool last = planned != planned_epochs_.end() && d.epoch + 1 >= planned->second;
    if (d.kind == SearchDecision::Kind::stop || (d.kind == SearchDecision::Kind::continue_training && last))
      ended_.insert(d.config);
  }
  return decisions;
}

std::vector<SearchDecision> OrderedReplay::forward_end(ConfigId config) {
  ended_.insert(config);
  return procedure_->on_config_ended(config);
}

std::vector<SearchDecision> OrderedReplay::leave_path() {
  diverged_ = true;
  std::vector<SearchDecision> out;
  auto append = [&](std::vector<SearchDecision> more) { out.insert(out.end(), more.begin(), more.end()); };
  std::vector<EpochKey> arrival;
  arrival.swap(arrival_);
  for (const auto& key : arrival) {
    auto it = held_.find(key);
    if (it == held_.end()) continue;
    EpochOutcome held = it->second;
    held_.erase(it);
    append(forward_decide(held));
  }
  std::set<ConfigId> ends;
  ends.swap(held_ends_);
  for (ConfigId c : ends) append(forward_end(c));
  order_.clear();
  remaining_.clear();
  return out;
}

std::vector<SearchDecision> OrderedReplay::release() {
  std::vector<SearchDecision> out;
  auto append = [&](std::vector<SearchDecision> more) { out.insert(out.end(), more.begin(), more.end()); };
  while (!diverged_ && !order_.empty()) {
    const RecordedEpochEnd head = order_.front();
    const EpochKey key{head.config, head.epoch};
    if (head.diverged && held_ends_.count(head.config)) {
      held_ends_.erase(head.config);
      order_.pop_front();
      remaining_.erase(key);
      append(forward_end(head.config));
      continue;
    }
    auto it = held_.find(key);
    if (!head.diverged && it != held_.end()) {
      EpochOutcome held = it->second;
      held_.erase(it);
      arrival_.erase(std::remove(arrival_.begin(), arrival_.end(), key), arrival_.end());
      order_.pop_front();
      remaining_.erase(key);
      append(forward_decide(held));
      continue;
    }
    // The head has not come yet; it never will if its config has ended here.
    if (ended_.count(head.config)) append(leave_path());
    break;
  }
  return out;
}

std::vector<SearchDecision> OrderedReplay::decide(const EpochOutcome& outcome) {
  if (diverged_) return forward_decide(outcome);
  const EpochKey key{outcome.config, outcome.epoch};
  if (!remaining_.count(key)) {
    // The original had no such epoch end (or had it earlier): off its path.
    auto out = leave_path();
    auto more = forward_decide(outcome);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  held_[key] = outcome;
  arrival_.push_back(key);
  return release();
}

std::vector<SearchDecision> OrderedReplay::on_config_ended(ConfigId config) {
  if (diverged_) return forward_end(config);
  const bool recorded_divergence = std::any_of(
      order_.begin(), order_.end(), [&](const RecordedEpochEnd& e) { return e.config == config && e.diverged; });
  if (recorded_divergence) {
    held_ends_.insert(config);
    return release();
  }
  // Ended without an epoch end of the unit log (failed): handed on now.
  auto out = forward_end(config);
  auto more = expected_later(config) ? leave_path() : release();
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::vector<ConfigProposal> OrderedReplay::take_proposals() {
  auto proposals = procedure_->take_proposals();
  for (const auto& p : proposals) planned_epochs_[p.config] = p.epochs;
  return proposals;
}

}  // namespace cerebro
