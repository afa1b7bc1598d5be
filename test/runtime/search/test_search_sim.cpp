#include "test/runtime/search/test_search_sim.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "runtime/scheduling/randomized_policy.hpp"

namespace cerebro::test {

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// How much one unit teaches a config: its "quality" when given, else best at lr = 1e-3.
double gain_of(const nlohmann::json& params) {
  if (params.contains("quality")) return params.at("quality").get<double>();
  const double lr = params.value("lr", 1e-3);
  return std::max(0.05, 1.0 - 0.5 * std::abs(std::log10(lr) + 3.0));
}

FakeState train(const FakeState& from, const Unit& u, const nlohmann::json& params) {
  FakeState s;
  s.hash = mix(from.hash ^
               mix((static_cast<uint64_t>(u.config) << 40) ^ (static_cast<uint64_t>(u.epoch) << 20) ^
                   static_cast<uint64_t>(u.partition)) ^
               std::hash<std::string>{}(params.dump()));
  s.skill = from.skill + gain_of(params);
  return s;
}

}  // namespace

SearchSimulation::SearchSimulation(SimCluster cluster, std::vector<ConfigParams> configs, int32_t epochs,
                                   std::unique_ptr<SearchProcedure> procedure, uint64_t seed,
                                   std::unique_ptr<SchedulingPolicy> policy)
    : cluster_(cluster),
      rng_(seed),
      control_(cluster.partitions, seed, ExperimentControl::Metric::val_accuracy, cluster.max_unit_retries,
               policy ? std::move(policy) : std::make_unique<RandomizedPolicy>(seed), std::move(procedure)) {
  std::bernoulli_distribution hold(0.5);
  std::uniform_int_distribution<WorkerId> any_worker(0, cluster.workers - 1);
  for (PartitionId p = 0; p < cluster.partitions; ++p) {
    bool held = false;
    for (WorkerId w = 0; w < cluster.workers; ++w) {
      if (cluster.embedded || hold(rng_)) {
        holdings_[w].push_back(p);
        held = true;
      }
    }
    if (!held) holdings_[any_worker(rng_)].push_back(p);
  }
  for (WorkerId w = 0; w < cluster.workers; ++w) control_.add_worker(w, holdings_[w]);
  for (const auto& c : configs) {
    control_.add_config(c.id, epochs);
    params_[c.id] = c.params;
    latest_[c.id] = FakeState{mix(static_cast<uint64_t>(c.id)), 0.0};
    speed_[c.id] = std::uniform_real_distribution<double>(0.5, 2.0)(rng_);
    epochs_completed_[c.id] = 0;
  }
  std::uniform_real_distribution<double> when(0.0, 3.0 * epochs);
  for (int32_t i = 0; i < cluster.worker_removals; ++i) push(Event::worker_leaves, when(rng_), -1, 0, -1);
}

void SearchSimulation::push(Event::Kind kind, double time, WorkerId worker, int64_t attempt, ConfigId config) {
  events_.push(Event{time, kind, worker, attempt, config, next_seq_++});
}

bool SearchSimulation::run() {
  take_actions();  // configs rejected before the start may already have unblocked decisions
  dispatch();
  while (!events_.empty()) {
    Event ev = events_.top();
    events_.pop();
    now_ = ev.time;
    handle(ev);
    take_actions();
    dispatch();
  }
  return control_.all_done();
}

int32_t SearchSimulation::epochs_completed(ConfigId c) const { return epochs_completed_.at(c); }

void SearchSimulation::dispatch() {
  for (const Dispatch& d : control_.dispatch()) {
    const ConfigId c = d.unit.config;
    if (pending_copies_.count(c))
      problem(fmt::format("{} dispatched while its state copy is pending", to_string(d.unit)));
    auto copied = copied_into_.find(c);
    if (copied != copied_into_.end()) {
      if (copied->second != latest_.at(c)) {
        problem(fmt::format("{} does not start from the state copied into config {}", to_string(d.unit), c));
      }
      copied_into_.erase(copied);
    }
    Attempt a{next_attempt_++,
              d,
              now_,
              std::bernoulli_distribution(cluster_.unit_failure_p)(rng_),
              std::bernoulli_distribution(cluster_.diverge_p)(rng_),
              latest_.at(c),
              params_.at(c)};
    const double duration = speed_.at(c) * std::uniform_real_distribution<double>(0.2, 1.0)(rng_);
    push(Event::unit_end, now_ + duration, d.worker, a.id, c);
    attempts_[d.worker] = std::move(a);
  }
}

void SearchSimulation::record(WorkerId w, const Unit& u, double start_s, bool committed) {
  log_.push_back(UnitRecord{u.config, u.partition, u.epoch, w, start_s, now_, committed});
}

void SearchSimulation::handle(const Event& ev) {
  switch (ev.kind) {
    case Event::unit_end: {
      auto it = attempts_.find(ev.worker);
      if (it == attempts_.end() || it->second.id != ev.attempt) return;  // the worker was removed
      Attempt a = std::move(it->second);
      attempts_.erase(it);
      if (a.fails) {
        record(ev.worker, a.dispatch.unit, a.start_s, false);
        control_.on_failed(ev.worker, a.dispatch.unit, "simulated failure");
      } else {
        finish_unit(a);
      }
      return;
    }
    case Event::copy_done: {
      auto it = pending_copies_.find(ev.config);
      if (it == pending_copies_.end()) return problem(fmt::format("copy to config {} done twice", ev.config));
      const StateCopy copy = it->second;
      pending_copies_.erase(it);
      latest_[copy.to] = epoch_end_.at(copy.from).at(copy.from_epoch);
      params_[copy.to] = copy.params;
      copied_into_[copy.to] = latest_[copy.to];
      control_.on_state_copied(copy.to);
      return;
    }
    case Event::worker_leaves: {
      std::vector<WorkerId> present;
      for (const auto& [w, holds] : holdings_) {
        if (control_.book().has_worker(w)) present.push_back(w);
      }
      if (present.size() < 2) return;  // keep one worker: the run must be able to finish
      const WorkerId w = present[std::uniform_int_distribution<size_t>(0, present.size() - 1)(rng_)];
      auto running = attempts_.find(w);
      if (running != attempts_.end()) {
        record(w, running->second.dispatch.unit, running->second.start_s, false);
        attempts_.erase(running);
      }
      control_.remove_worker(w);
      push(Event::worker_returns, now_ + std::uniform_real_distribution<double>(0.5, 3.0)(rng_), w, 0, -1);
      return;
    }
    case Event::worker_returns: control_.add_worker(ev.worker, holdings_.at(ev.worker)); return;
  }
}

void SearchSimulation::finish_unit(const Attempt& a) {
  const Unit& u = a.dispatch.unit;
  const FakeState state = train(a.start_state, u, a.params);
  latest_[u.config] = state;
  UnitLogEntry e;
  e.config = u.config;
  e.partition = u.partition;
  e.epoch = u.epoch;
  e.worker = a.dispatch.worker;
  e.status = a.diverges ? UnitStatus::diverged : UnitStatus::ok;
  e.examples = 10;
  e.train_loss = 1.0 / (1.0 + state.skill);
  e.has_validation = a.dispatch.validate;
  if (a.dispatch.validate) {
    // A tiny hash-derived part keeps different configs from tying.
    e.val_accuracy = state.skill / (state.skill + 3.0) + 1e-6 * static_cast<double>(state.hash % 1000);
    e.val_loss = 1.0 - e.val_accuracy;
    epoch_end_[u.config][u.epoch] = state;
    accuracy_[{u.config, u.epoch}] = e.val_accuracy;
    ++epochs_completed_[u.config];
  }
  record(a.dispatch.worker, u, a.start_s, true);
  auto& epochs = visit_order_[u.config];
  if (static_cast<int32_t>(epochs.size()) <= u.epoch) epochs.resize(u.epoch + 1);
  epochs[u.epoch].push_back(u.partition);
  control_.on_committed(a.dispatch.worker, e);
}

void SearchSimulation::take_actions() {
  for (auto& d : control_.take_decisions()) decisions_.push_back(std::move(d));
  for (auto& copy : control_.take_state_copies()) {
    auto source = epoch_end_.find(copy.from);
    if (source == epoch_end_.end() || !source->second.count(copy.from_epoch)) {
      problem(fmt::format("copy to config {} names config {} after epoch {}, which never ended", copy.to, copy.from,
                          copy.from_epoch));
      continue;
    }
    if (pending_copies_.count(copy.to)) problem(fmt::format("two copies to config {} at once", copy.to));
    if (attempts_.end() != std::find_if(attempts_.begin(), attempts_.end(), [&](const auto& entry) {
          return entry.second.dispatch.unit.config == copy.to;
        })) {
      problem(fmt::format("copy to config {} while a unit of it runs", copy.to));
    }
    pending_copies_[copy.to] = copy;
    copies_.push_back(copy);
    push(Event::copy_done, now_ + cluster_.copy_delay, -1, 0, copy.to);
  }
}

Status SearchSimulation::check() const {
  if (!problems_.empty()) return Status::internal(problems_.front());
  ExpectedRun expected;
  expected.num_partitions = cluster_.partitions;
  for (const auto& [c, n] : epochs_completed_) expected.epochs_completed[c] = n;
  if (Status s = check_mop_invariants(log_, expected); !s.ok()) return s;
  const int64_t committed = std::count_if(log_.begin(), log_.end(), [](const UnitRecord& r) { return r.committed; });
  if (control_.units_done() != committed || control_.units_total() != committed) {
    return Status::internal(fmt::format("units_done {} and units_total {} differ from the {} committed units",
                                        control_.units_done(), control_.units_total(), committed));
  }
  return Status();
}

}  // namespace cerebro::test
