// The simulator's event loop. Events are unit ends, worker failures and worker
// returns; after each, the workers that may have work ask the policy:
//
//  - the worker that just finished a unit (or came back) asks first;
//  - then the config its unit freed may go to a *waiting* worker (one that
//    asked earlier and got nothing), trying the waiting holders of the
//    partitions that config still needs, ascending, until one takes it.
//
// A waiting worker had no eligible unit, and one event frees at most one
// config, so for a policy that never leaves a worker idle while it has
// eligible units this asks exactly the workers ExperimentControl::dispatch()
// would start something on, without asking every idle worker after every
// event (which costs O(workers) per unit). A policy that does leave one idle
// (critical_path, to leave a heavy unit to a faster holder) is asked again
// whenever a config that worker could run is freed, not after every event.
//
// The worker that finished is not asked either when the run knows it has no
// eligible unit: when none of its partitions is in `may_have_idle_needer_`, a
// superset of the partitions some idle config needs. A config left idle
// after the wake-ups adds its pending partitions (16 words for 1,000
// partitions); a partition leaves when a holder's ask got nothing and the book
// confirms no idle config needs it. With uneven speeds fast workers finish
// their partition's work early and would otherwise ask in vain after most
// units (60 M of 160 M asks at 10,000 configs x 1,000 workers), each ask
// counting the idle configs over the partition's bitset. Any policy answers
// such an ask with nothing, so the book's history is the same kind of run;
// the policies' random draws and refresh times shift, so individual
// decisions differ (the ratios to the bound stay as good: docs/BENCHMARKS.md).
#include "runtime/sim/simulator_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

namespace cerebro {

namespace {

constexpr uint64_t kRunStream = 0x13198a2e03707344ULL;

}  // namespace

Simulator::Run::Run(const SimulationOptions& options, const Workload& workload, SchedulingPolicy& policy)
    : options_(options),
      workload_(workload),
      policy_(policy),
      rng_(options.seed ^ kRunStream),
      book_(workload.num_partitions()),
      next_event_(options.workers, EventKind::unit_ends),
      attempts_(options.workers),
      waiting_(options.workers, 0),
      waiting_holders_(workload.num_partitions(), 0),
      waiting_partitions_(workload.num_partitions()),
      may_have_idle_needer_(workload.num_partitions()),
      gang_members_(options.workers) {
  may_have_idle_needer_.fill();  // every config starts idle, needing every partition
  holders_ = Lists(workload.holders);
  holdings_ = Lists(workload.holdings);
  for (WorkerId w = 0; w < options.workers; ++w) book_.add_worker(w, workload.holdings[w]);
  report_.expected.num_partitions = workload.num_partitions();
  for (ConfigId c = 0; c < options.configs; ++c) {
    book_.add_config(c, workload.epochs_of(c));
    report_.expected.epochs_completed[c] = 0;
  }
  // Hyperband: how many configs of each bracket train to each rung barrier.
  rung_waiting_.resize(workload.bracket_rungs.size());
  for (size_t c = 0; c < workload.config_epochs.size(); ++c) {
    int32_t bracket = workload.config_bracket[c];
    for (int32_t rung_end : workload.bracket_rungs[bracket]) {
      if (workload.config_epochs[c] >= rung_end) ++rung_waiting_[bracket][rung_end].expected;
    }
  }
  if (options.parallelism != Parallelism::mop) {
    GangCosts costs;
    costs.allreduce_s = options.allreduce_s;  // as if probed before the run
    costs.setup_s = options.gang_setup_s;
    costs.steps_per_unit = std::ceil(static_cast<double>(workload.examples_per_partition) / options.batch_size);
    costs.max_gang = options.max_gang;
    planner_.emplace(options.parallelism, costs);
  }
  // Reading the clock twice per decision cost 7% of a 10^8-unit run: time
  // every decision up to 2^23 units, then a regular sample of about 2^23.
  latency_every_ = std::max<int64_t>(1, book_.units_total() >> 23);
  report_.decision_latency_every = latency_every_;
}

Result<SimulationReport> Simulator::Run::execute() {
  auto wall_start = std::chrono::steady_clock::now();
  for (WorkerId w = 0; w < options_.workers; ++w) offer(w);
  while (!events_.empty() && !book_.all_done()) {
    EventQueue::Event ev = events_.pop();
    now_ = ev.time;
    auto w = static_cast<WorkerId>(ev.payload);
    if (!events_.empty()) prefetch_for(static_cast<WorkerId>(events_.top_payload()));
    switch (next_event_[w]) {
      case EventKind::unit_ends:
        if (gang_members_[w].empty()) {
          unit_ends(w);
        } else {
          gang_ends(w);
        }
        break;
      case EventKind::worker_fails:
        if (gang_members_[w].empty()) {
          worker_fails(w);
        } else {
          gang_fails(w);
        }
        break;
      case EventKind::worker_returns:
        book_.add_worker(w, workload_.holdings[w]);
        offer(w);
        break;
    }
  }
  if (!book_.all_done()) {
    return Status::internal(
        fmt::format("simulation stalled at t={:.1f} s: {} of {} units done and every worker "
                    "idle (policy {} left eligible work undone?)",
                    now_, book_.units_done(), book_.units_total(), policy_.name()));
  }
  report_.policy = policy_.name();
  report_.options = options_;
  report_.units = book_.units_done();
  report_.bound = lower_bound(workload_);
  report_.ratio = report_.makespan_s / report_.bound.seconds();
  report_.ratio_gang_bound = report_.makespan_s / report_.bound.seconds_with_gangs(options_.max_gang);
  report_.utilization = busy_s_ / (report_.makespan_s * options_.workers);
  latencies_.calibrate();
  report_.decision_latency_p50_us = latencies_.percentile_us(0.50);
  report_.decision_latency_p99_us = latencies_.percentile_us(0.99);
  report_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(report_);
}

bool Simulator::Run::offer(WorkerId w) {
  std::optional<Unit> u;
  if (report_.decisions % latency_every_ == 0) {
    uint64_t before = LatencyHistogram::ticks();
    u = policy_.choose(w, book_);
    latencies_.add(LatencyHistogram::ticks() - before);
  } else {
    u = policy_.choose(w, book_);
  }
  ++report_.decisions;
  if (!u) {
    set_waiting(w, true);
    for (PartitionId p : holdings_.of(w)) {
      if (!book_.has_idle_needing(p)) may_have_idle_needer_.erase(p);
    }
    return false;
  }
  set_waiting(w, false);
  if (planner_ && start_gang(w, *u)) return true;
  book_.start(w, *u);  // a contract violation if the policy chose an ineligible unit
  double duration = workload_.unit_seconds(u->config, w);
  if (options_.noise > 0) duration *= 1 + std::uniform_real_distribution<double>(0, options_.noise)(rng_);
  attempts_[w] = Attempt{*u, now_, duration};
  if (options_.failure_rate > 0 && std::bernoulli_distribution(options_.failure_rate)(rng_)) {
    push(now_ + duration * std::uniform_real_distribution<double>(0, 1)(rng_), w, EventKind::worker_fails);
  } else {
    push(now_ + duration, w, EventKind::unit_ends);
  }
  return true;
}

void Simulator::Run::set_waiting(WorkerId w, bool waiting) {
  if (static_cast<bool>(waiting_[w]) == waiting) return;
  waiting_[w] = waiting;
  for (PartitionId p : holdings_.of(w)) {
    waiting_holders_[p] += waiting ? 1 : -1;
    if (waiting_holders_[p] == 0) {
      waiting_partitions_.erase(p);
    } else {
      waiting_partitions_.insert(p);
    }
  }
}

void Simulator::Run::wake_for(ConfigId c) {
  if (book_.state(c) != ConfigState::pending_epoch || book_.config_busy(c)) return;
  const PartitionSet& pending = book_.pending_set(c);
  bool taken = !waiting_partitions_.empty() && pending.any_common(waiting_partitions_, [&](PartitionId p) {
    for (WorkerId h : holders_.of(p)) {
      if (waiting_[h] && offer(h) && book_.config_busy(c)) return true;
    }
    return false;
  });
  if (!taken) may_have_idle_needer_.insert_all(pending);
}

void Simulator::Run::epoch_ended(ConfigId c) {
  int32_t done = ++report_.expected.epochs_completed[c];
  if (workload_.config_epochs.empty()) {
    book_.advance(c);
    return;
  }
  int32_t bracket = workload_.config_bracket[c];
  auto it = rung_waiting_[bracket].find(done);
  if (it == rung_waiting_[bracket].end()) {
    book_.advance(c);  // not a barrier (or its last epoch: the book finishes it)
    return;
  }
  Rung& rung = it->second;
  ++rung.arrived;
  if (done == workload_.config_epochs[c]) {
    book_.advance(c);  // not promoted: it ends here
  } else {
    rung.held.push_back(c);
  }
  if (rung.arrived < rung.expected) return;
  std::vector<ConfigId> released;
  released.swap(rung.held);
  for (ConfigId promoted : released) book_.advance(promoted);
  for (ConfigId promoted : released) wake_for(promoted);
}

void Simulator::Run::unit_ends(WorkerId w) {
  const Attempt a = attempts_[w];
  const Unit& u = a.unit;
  busy_s_ += now_ - a.start_s;
  report_.makespan_s = std::max(report_.makespan_s, now_);
  record(w, a, true);
  SchedulingPolicy::Observation observation{w, u, a.duration_s, 0, workload_.examples_per_partition};
  policy_.observe(observation);
  if (planner_) planner_->observe(observation);
  if (book_.complete(w, u)) epoch_ended(u.config);
  offer_or_wait(w);
  wake_for(u.config);
}

void Simulator::Run::offer_or_wait(WorkerId w) {
  if (book_.worker_busy(w)) return;  // a promoted config's wake-up gave it work already
  if (may_have_work(w)) {
    offer(w);
  } else {
    set_waiting(w, true);
  }
}

void Simulator::Run::worker_fails(WorkerId w) {
  const Attempt a = attempts_[w];
  busy_s_ += now_ - a.start_s;
  record(w, a, false);
  ++report_.failed_attempts;
  book_.remove_worker(w);  // its unit is pending again
  push(now_ + options_.downtime_s, w, EventKind::worker_returns);
  wake_for(a.unit.config);
}

}  // namespace cerebro
