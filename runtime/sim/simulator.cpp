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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <fmt/format.h>

#include "runtime/sim/event_queue.hpp"
#include "runtime/scheduling/gang_planner.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/partition_set.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/sim/simulator.hpp"

namespace cerebro {

namespace {

constexpr uint64_t kRunStream = 0x13198a2e03707344ULL;

// Decision latencies in clock ticks: exact below 100,000 ticks, kept one by
// one above. Ticks are the time-stamp counter on x86-64 (a few ns to read;
// steady_clock costs ~20 ns, a tenth of a decision), calibrated against
// steady_clock over the run; elsewhere they are steady_clock nanoseconds.
class LatencyHistogram {
 public:
  static uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }

  LatencyHistogram() : started_ticks_(ticks()), started_(std::chrono::steady_clock::now()) {}

  void add(uint64_t elapsed_ticks) {
    if (elapsed_ticks < counts_.size()) {
      ++counts_[elapsed_ticks];
    } else {
      slow_.push_back(elapsed_ticks);
    }
    ++total_;
  }
  // Call once, after the last add().
  void calibrate() {
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started_).count();
    uint64_t elapsed = ticks() - started_ticks_;
    ns_per_tick_ = elapsed > 0 ? ns / static_cast<double>(elapsed) : 1;
  }
  double percentile_us(double q) {
    if (total_ == 0) return 0;
    int64_t rank = std::min<int64_t>(total_ - 1, static_cast<int64_t>(q * static_cast<double>(total_)));
    int64_t seen = 0;
    for (size_t t = 0; t < counts_.size(); ++t) {
      seen += counts_[t];
      if (seen > rank) return static_cast<double>(t) * ns_per_tick_ / 1000;
    }
    std::sort(slow_.begin(), slow_.end());
    return static_cast<double>(slow_[rank - seen]) * ns_per_tick_ / 1000;
  }

 private:
  std::vector<int64_t> counts_ = std::vector<int64_t>(100000, 0);
  std::vector<uint64_t> slow_;
  int64_t total_ = 0;
  uint64_t started_ticks_;
  std::chrono::steady_clock::time_point started_;
  double ns_per_tick_ = 1;
};

}  // namespace

class Simulator::Run {
 public:
  Run(const SimulationOptions& options, const Workload& workload, SchedulingPolicy& policy)
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

  SimulationReport execute() {
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
      throw Error(fmt::format("simulation stalled at t={:.1f} s: {} of {} units done and every worker idle "
                              "(policy {} left eligible work undone?)",
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

 private:
  // Lists of ids (per partition or per worker) in one array.
  class Lists {
   public:
    struct Range {
      const int32_t* first;
      const int32_t* last;
      const int32_t* begin() const { return first; }
      const int32_t* end() const { return last; }
    };
    Lists() = default;
    explicit Lists(const std::vector<std::vector<int32_t>>& lists) {
      offsets_.push_back(0);
      for (const std::vector<int32_t>& list : lists) {
        items_.insert(items_.end(), list.begin(), list.end());
        offsets_.push_back(static_cast<int32_t>(items_.size()));
      }
    }
    Range of(int32_t i) const { return Range{items_.data() + offsets_[i], items_.data() + offsets_[i + 1]}; }

   private:
    std::vector<int32_t> offsets_;
    std::vector<int32_t> items_;
  };

  // A worker has at most one event pending: its kind is kept per worker.
  enum class EventKind : uint8_t { unit_ends, worker_fails, worker_returns };
  struct Attempt {
    Unit unit;
    double start_s = 0;
    double duration_s = 0;  // as planned; a failure cuts it short
    int64_t gang = 0;       // > 0: a gang's id; the gang's event is its first member's
  };
  // Per (bracket, rung end): configs expected there, arrived, and the promoted ones held.
  struct Rung {
    int32_t expected = 0;
    int32_t arrived = 0;
    std::vector<ConfigId> held;
  };

  void push(double time, WorkerId w, EventKind kind) {
    next_event_[w] = kind;
    events_.push(time, static_cast<uint32_t>(w));
  }

  // The next event is worker w's: while this one is handled, fetch what its
  // unit's end will touch (the config's entries in the book and the policy),
  // which at 10,000 configs are rarely still in cache.
  void prefetch_for(WorkerId w) const {
    if (next_event_[w] != EventKind::unit_ends) return;
    const Unit& u = attempts_[w].unit;
    book_.prefetch(u.config);
    policy_.prefetch_observation(w, u);
  }

  // Idle worker w asks the policy; it starts the unit chosen or waits.
  bool offer(WorkerId w) {
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
    book_.start(w, *u);  // throws if the policy chose an ineligible unit
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

  void set_waiting(WorkerId w, bool waiting) {
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

  // Config c is idle again: a waiting holder of a partition it needs may take
  // it; if none does, its partitions may have an idle needer from now on.
  void wake_for(ConfigId c) {
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

  // Whether w may have an eligible unit (false: it certainly has none).
  bool may_have_work(WorkerId w) const {
    for (PartitionId p : holdings_.of(w)) {
      if (may_have_idle_needer_.contains(p)) return true;
    }
    return false;
  }

  void record(WorkerId w, const Attempt& a, bool committed, int32_t gang_size = 0) {
    if (!options_.keep_log) return;
    report_.log.push_back(UnitRecord{a.unit.config, a.unit.partition, a.unit.epoch, w, a.start_s, now_, committed,
                                     a.gang, gang_size});
  }

  // Waiting workers that hold a partition config c still needs this epoch,
  // a few per gang seat, in partition order: the gang's candidates.
  std::vector<WorkerId> gang_candidates(WorkerId w, ConfigId c) {
    std::vector<WorkerId> out;
    if (waiting_partitions_.empty()) return out;
    size_t enough = static_cast<size_t>(options_.max_gang) * 2;
    book_.pending_set(c).for_each_common(waiting_partitions_, [&](PartitionId p) {
      if (out.size() >= enough) return;
      for (WorkerId h : holders_.of(p)) {
        if (h != w && waiting_[h] && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
      }
    });
    return out;
  }

  // The planner may turn u on w into a gang: started here (true) or not (false).
  bool start_gang(WorkerId w, const Unit& u) {
    std::vector<WorkerId> candidates = gang_candidates(w, u.config);
    if (candidates.empty()) return false;
    std::vector<MopBook::GangMember> members = planner_->plan(w, u, candidates, book_);
    if (members.empty()) return false;
    book_.start_gang(members);  // throws if the plan is not a valid gang
    auto k = static_cast<int32_t>(members.size());
    double slowest = 0;
    for (const MopBook::GangMember& m : members) {
      set_waiting(m.worker, false);
      slowest = std::max(slowest, workload_.unit_seconds(u.config, m.worker));
    }
    if (options_.noise > 0) slowest *= 1 + std::uniform_real_distribution<double>(0, options_.noise)(rng_);
    double duration = gang_seconds(slowest, k, planner_->costs());
    int64_t gang = ++gang_count_;
    for (const MopBook::GangMember& m : members) attempts_[m.worker] = Attempt{m.unit, now_, duration, gang};
    gang_members_[w] = members;
    // A gang fails when any member does: 1 - (1 - rate)^k per attempt.
    double fail_p = 1 - std::pow(1 - options_.failure_rate, k);
    if (options_.failure_rate > 0 && std::bernoulli_distribution(fail_p)(rng_)) {
      push(now_ + duration * std::uniform_real_distribution<double>(0, 1)(rng_), w, EventKind::worker_fails);
    } else {
      push(now_ + duration, w, EventKind::unit_ends);
    }
    return true;
  }

  // Config c's epoch ended: the search decides. Fixed epochs: always go on
  // (the book finishes it after its planned epochs). Hyperband: a config
  // promoted past a rung barrier waits for its bracket there.
  void epoch_ended(ConfigId c) {
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

  void gang_ends(WorkerId leader) {
    std::vector<MopBook::GangMember> members;
    members.swap(gang_members_[leader]);
    auto k = static_cast<int32_t>(members.size());
    const Attempt a = attempts_[leader];
    busy_s_ += (now_ - a.start_s) * k;
    report_.makespan_s = std::max(report_.makespan_s, now_);
    for (const MopBook::GangMember& m : members) record(m.worker, attempts_[m.worker], true, k);
    ++report_.gangs;
    report_.gang_units += k;
    // What a real gang measures: its allreduce per step.
    planner_->observe_allreduce(k, planner_->costs().allreduce_s * 2.0 * (k - 1) / k);
    if (book_.complete_gang(members)) epoch_ended(a.unit.config);
    for (const MopBook::GangMember& m : members) {
      if (book_.worker_busy(m.worker)) continue;  // a wake-up above gave it work
      if (may_have_work(m.worker)) {
        offer(m.worker);
      } else {
        set_waiting(m.worker, true);
      }
    }
    wake_for(a.unit.config);
  }

  // A member of the gang led by `leader` failed mid-attempt: nothing of the
  // gang counts, every unit is pending again, the member's worker is away.
  void gang_fails(WorkerId leader) {
    std::vector<MopBook::GangMember> members;
    members.swap(gang_members_[leader]);
    auto k = static_cast<int32_t>(members.size());
    const Attempt a = attempts_[leader];
    busy_s_ += (now_ - a.start_s) * k;
    for (const MopBook::GangMember& m : members) record(m.worker, attempts_[m.worker], false, k);
    ++report_.failed_attempts;
    WorkerId failed = members[std::uniform_int_distribution<size_t>(0, members.size() - 1)(rng_)].worker;
    book_.remove_worker(failed);
    book_.requeue_gang(members);
    push(now_ + options_.downtime_s, failed, EventKind::worker_returns);
    for (const MopBook::GangMember& m : members) {
      if (m.worker == failed || book_.worker_busy(m.worker)) continue;
      if (may_have_work(m.worker)) {
        offer(m.worker);
      } else {
        set_waiting(m.worker, true);
      }
    }
    wake_for(a.unit.config);
  }

  void unit_ends(WorkerId w) {
    const Attempt a = attempts_[w];
    const Unit& u = a.unit;
    busy_s_ += now_ - a.start_s;
    report_.makespan_s = std::max(report_.makespan_s, now_);
    record(w, a, true);
    SchedulingPolicy::Observation observation{w, u, a.duration_s, 0, workload_.examples_per_partition};
    policy_.observe(observation);
    if (planner_) planner_->observe(observation);
    if (book_.complete(w, u)) epoch_ended(u.config);
    if (book_.worker_busy(w)) {
      // a promoted config's wake-up gave it work already
    } else if (may_have_work(w)) {
      offer(w);
    } else {
      set_waiting(w, true);
    }
    wake_for(u.config);
  }

  void worker_fails(WorkerId w) {
    const Attempt a = attempts_[w];
    busy_s_ += now_ - a.start_s;
    record(w, a, false);
    ++report_.failed_attempts;
    book_.remove_worker(w);  // its unit is pending again
    push(now_ + options_.downtime_s, w, EventKind::worker_returns);
    wake_for(a.unit.config);
  }

  const SimulationOptions& options_;
  const Workload& workload_;
  SchedulingPolicy& policy_;
  std::mt19937_64 rng_;
  MopBook book_;
  EventQueue events_;
  std::vector<EventKind> next_event_;  // per worker: what its pending event is
  double now_ = 0;
  double busy_s_ = 0;
  std::vector<Attempt> attempts_;        // per worker, its current attempt
  std::vector<char> waiting_;            // per worker: idle, and got nothing or certainly had nothing
  std::vector<int32_t> waiting_holders_;  // per partition
  PartitionSet waiting_partitions_;       // partitions with a waiting holder
  // workload_.holders and .holdings flattened: one array each, not one
  // allocation per partition or worker (the loop reads them after every unit).
  Lists holders_, holdings_;
  // A superset of the partitions some idle pending_epoch config needs.
  PartitionSet may_have_idle_needer_;
  LatencyHistogram latencies_;
  int64_t latency_every_ = 1;  // decisions: every latency_every_-th is timed
  SimulationReport report_;
  std::optional<GangPlanner> planner_;  // unless parallelism is mop
  // Per worker leading a gang, its members (the leader first); empty otherwise.
  std::vector<std::vector<MopBook::GangMember>> gang_members_;
  int64_t gang_count_ = 0;
  // Per bracket: rung end (epochs) -> its barrier.
  std::vector<std::map<int32_t, Rung>> rung_waiting_;
};

Simulator::Simulator(const SimulationOptions& options, std::unique_ptr<SchedulingPolicy> policy)
    : options_(effective_options(options)), policy_(std::move(policy)) {
  Status valid = validate(options_);
  if (!valid.ok()) throw Error(valid.message());
  if (!policy_) throw Error("Simulator: no policy");
  workload_ = make_workload(options_);
}

Simulator::Simulator(const SimulationOptions& options, Workload workload, std::unique_ptr<SchedulingPolicy> policy)
    : options_(options), workload_(std::move(workload)), policy_(std::move(policy)) {
  Status valid = validate(options_);
  if (!valid.ok()) throw Error(valid.message());
  if (!policy_) throw Error("Simulator: no policy");
  if (workload_.config_mflops.size() != static_cast<size_t>(options.configs) ||
      workload_.worker_tflops.size() != static_cast<size_t>(options.workers) ||
      workload_.holdings.size() != static_cast<size_t>(options.workers) || workload_.holders.empty() ||
      workload_.epochs != options.epochs) {
    throw Error(fmt::format("Simulator: the workload ({} configs, {} workers, {} epochs) does not match the options "
                            "({} configs, {} workers, {} epochs)",
                            workload_.config_mflops.size(), workload_.worker_tflops.size(), workload_.epochs,
                            options.configs, options.workers, options.epochs));
  }
}

Simulator::~Simulator() = default;

const Workload& Simulator::workload() const { return workload_; }

SimulationReport Simulator::run() { return Run(options_, workload_, *policy_).execute(); }

Result<SimulationReport> simulate(const SimulationOptions& options, const std::string& policy) {
  Status valid = validate(options);
  if (!valid.ok()) return valid;
  std::unique_ptr<SchedulingPolicy> built;
  try {
    built = make_policy(policy, options.seed);
  } catch (const Error& e) {
    return Status::error(fmt::format("--policy: {}", e.what()));
  }
  try {
    if (options.priors) {
      Workload workload = make_workload(options);
      for (ConfigId c = 0; c < options.configs; ++c) {
        // Seconds per example on a 1 TFLOPS worker: the policy learns speeds as ratios.
        built->set_cost_prior(c, workload.unit_seconds(c, 0) * workload.worker_tflops[0] /
                                     static_cast<double>(workload.examples_per_partition));
      }
      return Simulator(options, std::move(workload), std::move(built)).run();
    }
    return Simulator(options, std::move(built)).run();
  } catch (const Error& e) {
    return Status::error(e.what());
  }
}

}  // namespace cerebro
