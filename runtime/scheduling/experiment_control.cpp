#include <cmath>
#include "runtime/scheduling/experiment_control.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"
#include "runtime/base/status.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/steering.hpp"

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
                                     std::unique_ptr<SchedulingPolicy> policy, std::unique_ptr<SearchProcedure> search)
    : book_(num_partitions),
      seed_(seed),
      metric_(metric),
      max_unit_retries_(max_unit_retries),
      policy_(std::move(policy)),
      search_(std::move(search)) {
  collect_proposals();
}

void ExperimentControl::collect_proposals() {
  for (auto& p : search_->take_proposals()) resolve(std::move(p));
}

void ExperimentControl::resolve(ConfigProposal p) {
  auto known = recorded_.find(p.config);
  if (known == recorded_.end()) {
    pending_creation_[p.config] = p.epochs;
    proposals_.push_back(std::move(p));
    return;
  }
  const ConfigRecord record = known->second;
  recorded_.erase(known);
  pending_creation_.erase(p.config);
  if (record.params != p.params) search_->use_recorded_params(p.config, record.params);
  if (record.status == ConfigStatus::failed) {
    reject_config(p.config, record.error);
  } else {
    add_config(p.config, p.epochs);
  }
}

std::vector<ConfigProposal> ExperimentControl::take_proposals() {
  collect_proposals();
  std::vector<ConfigProposal> out;
  out.swap(proposals_);
  return out;
}

void ExperimentControl::on_config_created(ConfigId c, int32_t stages) {
  auto it = pending_creation_.find(c);
  if (it == pending_creation_.end())
    contract_violation("ExperimentControl::on_config_created", fmt::format("config {} was not proposed", c));
  if (stages >= 2) pipeline_stages_[c] = stages;  // before it can be dispatched
  const int32_t epochs = it->second;
  pending_creation_.erase(it);
  add_config(c, epochs);
}

ControlEvents ExperimentControl::on_config_rejected(ConfigId c, const std::string& error) {
  if (!pending_creation_.erase(c))
    contract_violation("ExperimentControl::on_config_rejected", fmt::format("config {} was not proposed", c));
  outcomes_[c] = ConfigOutcome{ConfigStatus::failed, error};
  ControlEvent rejected{ControlEvent::Kind::pilot_failed};
  rejected.config = c;
  rejected.error = error;
  ControlEvents out{rejected};
  config_ended(c, out);
  return out;
}

void ExperimentControl::set_recorded_configs(const std::vector<ConfigRecord>& records) {
  for (const auto& r : records) recorded_[r.id] = r;
  std::vector<ConfigProposal> waiting;
  waiting.swap(proposals_);
  for (auto& p : waiting) resolve(std::move(p));
}

void ExperimentControl::add_worker(WorkerId w, std::vector<PartitionId> holds) {
  if (auto host = pipeline_hosts_.find(w); host != pipeline_hosts_.end()) {
    host->second = std::move(holds);  // a pipeline stage's host: it rejoins with these
    return;
  }
  book_.add_worker(w, std::move(holds));
}

void ExperimentControl::remove_worker(WorkerId w) {
  pipeline_worker_leaves(w);
  if (!book_.has_worker(w)) return;
  // Its gang cannot finish without it: the attempt fails whole (not counted
  // against the units, as a unit alone on a lost node is not).
  if (auto gang = gang_of(w)) {
    book_.requeue_gang(gangs_.at(*gang));
    gangs_.erase(*gang);
  }
  book_.remove_worker(w);
}

void ExperimentControl::add_config(ConfigId c, int32_t epochs) {
  book_.add_config(c, epochs);
  outcomes_[c] = ConfigOutcome{};
}

void ExperimentControl::reject_config(ConfigId c, const std::string& error) {
  outcomes_[c] = ConfigOutcome{ConfigStatus::failed, error};
  config_ended(c);
}

Dispatch ExperimentControl::make_dispatch(WorkerId w, const Unit& u) const {
  Dispatch d;
  d.worker = w;
  d.unit = u;
  d.seed = unit_seed(seed_, u);
  auto it = failed_attempts_.find(u);
  d.attempt = it == failed_attempts_.end() ? 0 : it->second;
  return d;
}

DispatchBatch ExperimentControl::dispatch_all() {
  DispatchBatch out;
  if (paused_) return out;
  check_pipeline_crews(out);
  const std::vector<WorkerId> idle = book_.idle_workers();
  for (auto w : idle) {
    // Joined a gang, or hosts a pipeline stage, formed earlier in this loop.
    if (!book_.has_worker(w) || book_.worker_busy(w)) continue;
    auto unit = policy_->choose(w, book_);
    if (!unit) continue;
    if (dispatch_pipeline(w, *unit, idle, out)) continue;
    if (auto recorded = recorded_gang_for(w, *unit, idle)) {
      if (!recorded->empty()) start_gang(*recorded, out);
      continue;  // else w waits until the recorded gang's workers are idle together
    }
    if (planner_) {
      std::vector<WorkerId> candidates;
      for (WorkerId other : idle)
        if (other != w && book_.has_worker(other) && !book_.worker_busy(other)) candidates.push_back(other);
      std::vector<MopBook::GangMember> members = planner_->plan(w, *unit, candidates, book_);
      if (!members.empty()) {
        start_gang(members, out);
        continue;
      }
    }
    book_.start(w, *unit);
    Dispatch d = make_dispatch(w, *unit);
    d.validate = book_.pending_partitions(unit->config).empty();
    out.units.push_back(d);
  }
  return out;
}

std::vector<Dispatch> ExperimentControl::dispatch() {
  DispatchBatch batch = dispatch_all();
  if (!batch.gangs.empty() || !batch.pipelines.empty())
    contract_violation("ExperimentControl::dispatch",
                       fmt::format("it started {} gang(s) and {} pipeline attempt(s): a shell running them calls "
                                   "dispatch_all()",
                                   batch.gangs.size(), batch.pipelines.size()));
  return std::move(batch.units);
}

bool ExperimentControl::better(double a, double b) const { return metric_.higher_is_better() ? a > b : a < b; }

ControlEvents ExperimentControl::on_committed(WorkerId w, const UnitLogEntry& e) {
  SchedulingPolicy::Observation observation{w, Unit{e.config, e.partition, e.epoch}, e.train_s, e.validate_s,
                                            e.examples};
  policy_->observe(observation);
  if (planner_) planner_->observe(observation);
  return commit(w, e);
}

void ExperimentControl::account(const UnitLogEntry& e) {
  auto& loss = epoch_loss_[e.config];
  loss.first += e.train_loss * static_cast<double>(e.examples);
  loss.second += e.examples;
  train_seconds_[e.config] += e.train_s;
}

ControlEvents ExperimentControl::commit(WorkerId w, const UnitLogEntry& e) {
  account(e);
  const Unit u{e.config, e.partition, e.epoch};
  const auto handed_over = book_.handed_over(e.config);
  bool epoch_ended = handed_over && *handed_over == u ? book_.complete_handed_over(u) : book_.complete(w, u);
  return conclude(e, e.status == UnitStatus::diverged, epoch_ended);
}

ControlEvents ExperimentControl::conclude(const UnitLogEntry& e, bool diverged, bool epoch_ended) {
  auto& loss = epoch_loss_[e.config];
  auto& outcome = outcomes_[e.config];
  if (diverged) {
    auto state = book_.state(e.config);
    const bool live = state == ConfigState::pending_epoch || state == ConfigState::awaiting_decision;
    if (live) book_.stop(e.config);
    outcome = ConfigOutcome{ConfigStatus::diverged,
                            fmt::format("loss became NaN/inf in epoch {} on partition {}", e.epoch, e.partition)};
    ControlEvent event{ControlEvent::Kind::diverged};
    event.config = e.config;
    event.epoch = e.epoch;
    ControlEvents out{event};
    if (live) config_ended(e.config, out);
    return out;
  }
  if (!epoch_ended) return {};

  EpochOutcome result{e.config,   e.epoch,        loss.second ? loss.first / static_cast<double>(loss.second) : 0.0,
                      e.val_loss, e.val_accuracy, e.val_metrics};
  result.train_seconds = train_seconds_[e.config];
  loss = {0.0, 0};
  last_metric_[e.config] = metric_value(metric_, e.val_loss, e.val_accuracy, e.val_metrics);
  ControlEvent scored{ControlEvent::Kind::epoch_scored};
  scored.config = e.config;
  scored.epoch = e.epoch;
  scored.train_loss = result.train_loss;
  scored.val_loss = e.val_loss;
  scored.val_accuracy = e.val_accuracy;
  scored.val_metrics = e.val_metrics;
  ControlEvents out{scored};
  apply(search_->decide(result), out);
  return out;
}

void ExperimentControl::apply(const std::vector<SearchDecision>& decisions, ControlEvents& out) {
  // The procedures are the core's own: a decision the schedule cannot take is
  // a bug in one, checked here with its name before the book would abort.
  const std::string where = "search procedure " + search_->name();
  for (const auto& d : decisions) {
    if (!book_.has_config(d.config)) {
      contract_violation(
          where, fmt::format("it decided \"{}\" for config {}, which is not in the schedule", to_string(d), d.config));
    }
    const auto state = book_.state(d.config);
    if (state != ConfigState::awaiting_decision || book_.epoch(d.config) != d.epoch || copy_pending(d.config)) {
      contract_violation(where, fmt::format("it decided \"{}\" but config {} is {} in epoch {}{}, not "
                                            "awaiting a decision after epoch {}",
                                            to_string(d), d.config, to_string(state), book_.epoch(d.config),
                                            copy_pending(d.config) ? " waiting for a state copy" : "", d.epoch));
    }
    auto& outcome = outcomes_[d.config];
    switch (d.kind) {
      case SearchDecision::Kind::continue_training:
        book_.advance(d.config);
        if (book_.state(d.config) == ConfigState::finished) outcome.status = ConfigStatus::completed;
        break;
      case SearchDecision::Kind::stop:
        book_.stop(d.config);
        outcome.status = ConfigStatus::stopped;
        break;
      case SearchDecision::Kind::exploit:
        if (d.source == d.config || !outcomes_.count(d.source) || d.source_epoch < 0 || !d.params.is_object()) {
          contract_violation(where, fmt::format("it decided \"{}\": the source must be another known "
                                                "config with an epoch, and params an object",
                                                to_string(d)));
        }
        pending_copies_[d.config] = d;
        copies_.push_back(StateCopy{d.config, d.source, d.source_epoch, d.params});
        break;
    }
    decisions_.push_back(d);
    if (d.kind != SearchDecision::Kind::continue_training || !d.reason.empty()) {
      ControlEvent said{ControlEvent::Kind::decision};
      said.config = d.config;
      said.epoch = d.epoch;
      said.decision = d;
      out.push_back(std::move(said));
    }
  }
  // A config that ended may have freed a slot for a new proposal (tpe).
  collect_proposals();
}

void ExperimentControl::config_ended(ConfigId c, ControlEvents& out) { apply(search_->on_config_ended(c), out); }

std::vector<SearchDecision> ExperimentControl::take_decisions() {
  std::vector<SearchDecision> out;
  out.swap(decisions_);
  return out;
}

std::vector<StateCopy> ExperimentControl::take_state_copies() {
  std::vector<StateCopy> out;
  out.swap(copies_);
  return out;
}

ControlEvents ExperimentControl::on_state_copied(ConfigId to) {
  auto it = pending_copies_.find(to);
  if (it == pending_copies_.end())
    contract_violation("ExperimentControl::on_state_copied", fmt::format("no state copy to config {} is pending", to));
  const SearchDecision d = it->second;
  pending_copies_.erase(it);
  book_.advance(to);
  if (book_.state(to) == ConfigState::finished) outcomes_[to].status = ConfigStatus::completed;
  ControlEvent copied{ControlEvent::Kind::state_copied};
  copied.config = to;
  copied.decision = d;
  return {copied};
}

ControlEvents ExperimentControl::on_state_copy_failed(ConfigId to, const std::string& error) {
  auto it = pending_copies_.find(to);
  if (it == pending_copies_.end()) {
    contract_violation("ExperimentControl::on_state_copy_failed",
                       fmt::format("no state copy to config {} is pending", to));
  }
  const SearchDecision d = it->second;
  pending_copies_.erase(it);
  book_.fail(to);
  outcomes_[to] = ConfigOutcome{ConfigStatus::failed, error};
  ControlEvent failed{ControlEvent::Kind::state_copy_failed};
  failed.config = to;
  failed.decision = d;
  failed.error = error;
  ControlEvents out{failed};
  config_ended(to, out);
  return out;
}

void ExperimentControl::on_result(WorkerId w, const Unit& u) { book_.hand_over(w, u); }

ControlEvents ExperimentControl::on_commit_failed(const Unit& u, const std::string& error) {
  book_.requeue_handed_over(u);
  return count_failure(u, error);
}

ControlEvents ExperimentControl::on_failed(WorkerId w, const Unit& u, const std::string& error) {
  book_.requeue(w, u);
  return count_failure(u, error);
}

ControlEvents ExperimentControl::on_worker_died(WorkerId w, const std::string& error) {
  pipeline_worker_leaves(w);
  if (!book_.has_worker(w)) return {};
  if (gang_of(w)) {
    ControlEvents events = fail_gang_of(w, error);
    book_.remove_worker(w);
    return events;
  }
  auto unit = book_.running_on(w);
  book_.remove_worker(w);
  if (!unit) return {};
  return count_failure(*unit, error);
}

ControlEvents ExperimentControl::count_failure(const Unit& u, const std::string& error) {
  int32_t failures = ++failed_attempts_[u];
  ControlEvent event{ControlEvent::Kind::attempt_failed};
  event.config = u.config;
  event.epoch = u.epoch;
  event.unit = u;
  event.count = failures;
  event.limit = max_unit_retries_;
  event.error = error;
  if (failures < max_unit_retries_ || book_.state(u.config) != ConfigState::pending_epoch) return {event};
  book_.fail(u.config);
  outcomes_[u.config] = ConfigOutcome{ConfigStatus::failed, error};
  event.kind = ControlEvent::Kind::config_gave_up;
  ControlEvents out{event};
  config_ended(u.config, out);
  return out;
}

std::optional<std::pair<ConfigId, double>> ExperimentControl::best() const {
  std::optional<std::pair<ConfigId, double>> best;
  for (const auto& [c, m] : last_metric_) {
    if (config_failed(outcomes_.at(c).status) || std::isnan(m)) continue;
    if (!best || better(m, best->second)) best = std::make_pair(c, m);
  }
  return best;
}

progress_update ExperimentControl::progress(double elapsed_s) const {
  progress_update p;
  p.units_done = units_done();
  p.units_total = units_total();
  p.elapsed_s = elapsed_s;
  for (const auto& [unit, failures] : failed_attempts_) p.units_failed += failures;
  if (auto b = best()) {
    p.best_config = b->first;
    p.best_metric = b->second;
  }
  bool first = true;
  for (auto c : book_.configs()) {
    auto state = book_.state(c);
    if (state != ConfigState::pending_epoch && state != ConfigState::awaiting_decision) continue;
    p.epoch_low = first ? book_.epoch(c) : std::min(p.epoch_low, book_.epoch(c));
    p.epoch_high = first ? book_.epoch(c) : std::max(p.epoch_high, book_.epoch(c));
    first = false;
  }
  for (auto w : book_.workers()) {
    auto unit = book_.running_on(w);
    if (!unit) continue;
    p.running_workers.push_back(w);
    p.running_units.push_back(to_string(*unit));
  }
  return p;
}

Status ExperimentControl::pause() {
  if (paused_) return Status::failed_precondition("the experiment is already paused");
  paused_ = true;
  user_actions_.push_back(user_action(SteeringCommand::pause));
  return Status::ok_status();
}

Status ExperimentControl::resume() {
  if (!paused_) return Status::failed_precondition("the experiment is not paused");
  paused_ = false;
  user_actions_.push_back(user_action(SteeringCommand::resume));
  return Status::ok_status();
}

Status ExperimentControl::stop_config(ConfigId c) {
  if (!outcomes_.count(c)) return Status::not_found(fmt::format("the experiment has no config {}", c));
  const auto state = book_.state(c);
  if (state != ConfigState::pending_epoch && state != ConfigState::awaiting_decision)
    return Status::failed_precondition(
        fmt::format("config {} has already ended ({})", c, to_string(outcomes_.at(c).status)));
  if (copy_pending(c))
    return Status::unavailable(fmt::format("config {} is taking another config's state (PBT); stop it after that", c));
  auto record = user_action(SteeringCommand::stop);
  record["config"] = c;
  record["epoch"] = book_.epoch(c);
  book_.stop(c);
  outcomes_[c] = ConfigOutcome{ConfigStatus::stopped, "stopped by the user"};
  user_actions_.push_back(std::move(record));
  // The procedure may have been waiting for this config (a rung): tell it.
  config_ended(c);
  return Status::ok_status();
}

Status ExperimentControl::add_config_by_user(ConfigId c, int32_t epochs, const nlohmann::json& params,
                                             ConfigId cloned_from, int32_t stages) {
  if (!search_->takes_added_configs())
    return Status::failed_precondition(
        fmt::format("configs can be added to grid and random searches only; this experiment "
                    "runs {}, which plans its configs up front",
                    search_->name()));
  if (outcomes_.count(c)) return Status::invalid_argument(fmt::format("config {} exists already", c));
  if (epochs < 1) return Status::invalid_argument(fmt::format("config {}: epochs must be >= 1, got {}", c, epochs));
  if (cloned_from >= 0 && !outcomes_.count(cloned_from))
    return Status::not_found(fmt::format("the experiment has no config {} to clone", cloned_from));
  if (stages < 1) return Status::invalid_argument(fmt::format("config {}: stages must be >= 1, got {}", c, stages));
  book_.add_config(c, epochs);
  outcomes_[c] = ConfigOutcome{};
  if (stages >= 2) pipeline_stages_[c] = stages;  // before the shell dispatches again
  auto record = user_action(SteeringCommand::add);
  record["config"] = c;
  record["params"] = params;
  record["epochs"] = epochs;
  record["cloned_from"] = cloned_from;
  if (stages >= 2) record["pipeline_stages"] = stages;
  user_actions_.push_back(std::move(record));
  return Status::ok_status();
}

std::vector<nlohmann::json> ExperimentControl::take_user_actions() {
  std::vector<nlohmann::json> out;
  out.swap(user_actions_);
  return out;
}

}  // namespace cerebro
