#include "runtime/experiment_control.hpp"

#include <fmt/format.h>

namespace cerebro {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t unit_seed(uint64_t experiment_seed, const Unit& u) {
  uint64_t h = splitmix64(experiment_seed);
  h = splitmix64(h ^ static_cast<uint64_t>(u.config));
  h = splitmix64(h ^ static_cast<uint64_t>(u.epoch));
  return splitmix64(h ^ static_cast<uint64_t>(u.partition));
}

ExperimentControl::ExperimentControl(int32_t num_partitions, uint64_t seed, Metric metric, int max_unit_retries,
                                     std::unique_ptr<SchedulingPolicy> policy,
                                     std::unique_ptr<SearchProcedure> search)
    : book_(num_partitions),
      seed_(seed),
      metric_(metric),
      max_unit_retries_(max_unit_retries),
      policy_(std::move(policy)),
      search_(std::move(search)) {}

void ExperimentControl::add_worker(WorkerId w, std::vector<PartitionId> holds) {
  book_.add_worker(w, std::move(holds));
}

void ExperimentControl::remove_worker(WorkerId w) {
  if (book_.has_worker(w)) book_.remove_worker(w);
}

void ExperimentControl::add_config(ConfigId c, int32_t epochs) {
  book_.add_config(c, epochs);
  outcomes_[c] = ConfigOutcome{};
}

void ExperimentControl::reject_config(ConfigId c, const std::string& error) {
  outcomes_[c] = ConfigOutcome{"failed", error};
}

std::vector<Dispatch> ExperimentControl::dispatch() {
  std::vector<Dispatch> out;
  for (auto w : book_.idle_workers()) {
    auto unit = policy_->choose(w, book_);
    if (!unit) continue;
    book_.start(w, *unit);
    Dispatch d;
    d.worker = w;
    d.unit = *unit;
    d.seed = unit_seed(seed_, *unit);
    d.validate = book_.pending_partitions(unit->config).empty();
    auto it = failed_attempts_.find(*unit);
    d.attempt = it == failed_attempts_.end() ? 0 : it->second;
    out.push_back(d);
  }
  return out;
}

bool ExperimentControl::better(double a, double b) const {
  return metric_ == Metric::val_accuracy ? a > b : a < b;
}

std::string ExperimentControl::on_committed(WorkerId w, const UnitLogEntry& e) {
  Unit u{e.config, e.partition, e.epoch};
  auto& loss = epoch_loss_[e.config];
  loss.first += e.train_loss * static_cast<double>(e.examples);
  loss.second += e.examples;
  policy_->observe({w, u, e.train_s, e.validate_s, e.examples});
  bool epoch_ended = book_.complete(w, u);
  auto& outcome = outcomes_[e.config];
  if (e.status == "diverged") {
    auto state = book_.state(e.config);
    if (state == ConfigState::pending_epoch || state == ConfigState::awaiting_decision) book_.stop(e.config);
    outcome = ConfigOutcome{"diverged", fmt::format("loss became NaN/inf in epoch {} on partition {}", e.epoch,
                                                    e.partition)};
    return fmt::format("config {} diverged (loss NaN/inf) in epoch {}", e.config, e.epoch);
  }
  if (!epoch_ended) return {};

  EpochOutcome result{e.config, e.epoch, loss.second ? loss.first / static_cast<double>(loss.second) : 0.0,
                      e.val_loss, e.val_accuracy};
  loss = {0.0, 0};
  last_metric_[e.config] = metric_ == Metric::val_accuracy ? e.val_accuracy : e.val_loss;
  if (search_->on_epoch_end(result) == EpochDecision::stop) {
    book_.stop(e.config);
    outcome.status = "stopped";
  } else {
    book_.advance(e.config);
    if (book_.state(e.config) == ConfigState::finished) outcome.status = "completed";
  }
  return fmt::format("config {} epoch {}: train_loss {:.4f} val_loss {:.4f} val_accuracy {:.4f}", e.config,
                     e.epoch, result.train_loss, e.val_loss, e.val_accuracy);
}

std::string ExperimentControl::on_failed(WorkerId w, const Unit& u, const std::string& error) {
  book_.requeue(w, u);
  int32_t failures = ++failed_attempts_[u];
  if (failures < max_unit_retries_ || book_.state(u.config) != ConfigState::pending_epoch)
    return fmt::format("{} failed (attempt {} of {}): {}", to_string(u), failures, max_unit_retries_, error);
  book_.fail(u.config);
  outcomes_[u.config] = ConfigOutcome{"failed", error};
  return fmt::format("config {} failed after {} attempts of {}: {}", u.config, failures, to_string(u), error);
}

std::optional<std::pair<ConfigId, double>> ExperimentControl::best() const {
  std::optional<std::pair<ConfigId, double>> best;
  for (const auto& [c, m] : last_metric_) {
    if (outcomes_.at(c).status == "diverged" || outcomes_.at(c).status == "failed") continue;
    if (!best || better(m, best->second)) best = std::make_pair(c, m);
  }
  return best;
}

}  // namespace cerebro
