// A discrete-event simulation of a Cerebro cluster driving MopBook with a
// SchedulingPolicy: random unit durations, failed attempts, workers leaving and
// coming back, configs added late, stopped or failed at any time. Every run's
// unit log must pass check_mop_invariants, and every run must finish.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <queue>
#include <random>

#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/scheduling/replay_policy.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/scheduling/unit_log_check.hpp"

using namespace cerebro;

namespace {

struct SimOptions {
  int32_t workers = 1, configs = 1, partitions = 1, max_epochs = 1;
  bool embedded = false;        // every worker holds every partition
  double unit_failure_p = 0;    // per attempt
  int32_t worker_removals = 0;  // each worker comes back after a while
  int32_t late_configs = 0;     // added while the run is under way
  double config_end_p = 0;      // per event: stop or fail a random live config
  double early_stop_p = 0;      // per epoch boundary: the procedure says stop
  // Planned epochs of config c (the late ones last), 1..max_epochs.
  std::vector<int32_t> config_epochs;
};

// How often the rare paths ran, summed over cases, so the test can insist
// they were exercised at all.
struct SimCounters {
  int64_t failed_attempts = 0, lost_in_flight = 0, ignored_completions = 0;
  int64_t configs_ended = 0, early_stops = 0, late_configs = 0, epochs_completed = 0;
};

// A search procedure that stops each config at an epoch end with probability p.
class RandomStopProcedure : public SearchProcedure {
 public:
  RandomStopProcedure(double p, std::mt19937_64& rng) : stop_(p), rng_(rng) {}
  EpochDecision on_epoch_end(const EpochOutcome&) override {
    return stop_(rng_) ? EpochDecision::stop : EpochDecision::continue_training;
  }

 private:
  std::bernoulli_distribution stop_;
  std::mt19937_64& rng_;
};

class Simulation {
 public:
  Simulation(const SimOptions& options, std::unique_ptr<SchedulingPolicy> policy, uint64_t seed,
             bool policy_is_work_conserving)
      : options_(options),
        rng_(seed),
        book_(options.partitions),
        policy_(std::move(policy)),
        procedure_(options.early_stop_p, rng_),
        work_conserving_(policy_is_work_conserving) {
    expected_.num_partitions = options.partitions;
    place_workers();
    for (ConfigId c = 0; c < options.configs; ++c) add_config(c);
    std::uniform_real_distribution<double> when(0.0, 3.0 * options.max_epochs);
    for (int32_t i = 0; i < options.late_configs; ++i) {
      push(Event{when(rng_), Event::late_config, -1, {}, 0, false, options.configs + i});
    }
    for (int32_t i = 0; i < options.worker_removals; ++i) {
      push(Event{when(rng_), Event::worker_leaves, -1, {}, 0, false, 0});
    }
  }

  // Runs to the end; returns false (after reporting) if the run stalled.
  bool run(SimCounters& counters) {
    dispatch();
    while (!events_.empty()) {
      Event ev = events_.top();
      events_.pop();
      now_ = ev.time;
      handle(ev, counters);
      maybe_end_a_config(counters);
      dispatch();
    }
    BOOST_TEST(book_.all_done(), "run stalled at t=" << now_ << " with " << book_.units_done() << " of "
                                                     << book_.units_total() << " units");
    return book_.all_done();
  }

  void check_outcome() const {
    Status s = check_mop_invariants(log_, expected_);
    BOOST_TEST(s.ok(), s.message());
    int64_t committed = std::count_if(log_.begin(), log_.end(), [](const UnitRecord& r) { return r.committed; });
    BOOST_TEST(book_.units_done() == committed);
    BOOST_TEST(book_.units_total() == book_.units_done());
    for (ConfigId c : book_.configs()) {
      BOOST_TEST(book_.remaining_units(c) == 0);
      if (book_.state(c) == ConfigState::finished) {
        BOOST_TEST(expected_.epochs_completed.at(c) == book_.planned_epochs(c), "config " << c);
      }
    }
  }

  const ReplayPolicy::VisitOrder& visit_order() const { return visit_order_; }

 private:
  struct Event {
    enum Kind { unit_end, decision, worker_leaves, worker_returns, late_config };
    double time;
    Kind kind;
    WorkerId worker;
    Unit unit;
    int64_t attempt;
    bool attempt_fails;
    ConfigId config;  // late_config, decision
    int64_t seq = 0;  // ties break in insertion order: deterministic runs
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return std::tie(a.time, a.seq) > std::tie(b.time, b.seq); }
  };
  struct Attempt {
    int64_t id;
    double start_s;
  };

  void push(Event ev) {
    ev.seq = next_seq_++;
    events_.push(ev);
  }

  // Random holdings where each partition has at least one holder.
  void place_workers() {
    std::vector<std::vector<PartitionId>> holds(options_.workers);
    std::bernoulli_distribution hold(0.4);
    std::uniform_int_distribution<WorkerId> any_worker(0, options_.workers - 1);
    for (PartitionId p = 0; p < options_.partitions; ++p) {
      bool held = false;
      for (WorkerId w = 0; w < options_.workers; ++w) {
        if (options_.embedded || hold(rng_)) {
          holds[w].push_back(p);
          held = true;
        }
      }
      if (!held) holds[any_worker(rng_)].push_back(p);
    }
    for (WorkerId w = 0; w < options_.workers; ++w) {
      holdings_[w] = holds[w];
      book_.add_worker(w, holds[w]);
    }
  }

  void add_config(ConfigId c) {
    book_.add_config(c, options_.config_epochs.at(c));
    expected_.epochs_completed[c] = 0;
    speed_[c] = std::uniform_real_distribution<double>(0.5, 2.0)(rng_);
  }

  void dispatch() {
    std::vector<WorkerId> idle = book_.idle_workers();
    std::shuffle(idle.begin(), idle.end(), rng_);
    for (WorkerId w : idle) {
      std::vector<Unit> eligible = book_.eligible_units(w);
      std::optional<Unit> u = policy_->choose(w, book_);
      if (!u) {
        if (work_conserving_) BOOST_TEST_REQUIRE(eligible.empty());
        continue;
      }
      BOOST_TEST_REQUIRE((std::find(eligible.begin(), eligible.end(), *u) != eligible.end()),
                         policy_->name() << " chose ineligible " << to_string(*u));
      book_.start(w, *u);
      double duration = speed_[u->config] * std::uniform_real_distribution<double>(0.2, 1.0)(rng_);
      bool fails = std::bernoulli_distribution(options_.unit_failure_p)(rng_);
      int64_t id = next_attempt_++;
      attempts_[w] = Attempt{id, now_};
      push(Event{now_ + duration, Event::unit_end, w, *u, id, fails, u->config});
    }
  }

  void record(WorkerId w, const Unit& u, bool committed) {
    log_.push_back(UnitRecord{u.config, u.partition, u.epoch, w, attempts_.at(w).start_s, now_, committed});
  }

  void handle(const Event& ev, SimCounters& counters) {
    switch (ev.kind) {
      case Event::unit_end: {
        auto it = attempts_.find(ev.worker);
        if (it == attempts_.end() || it->second.id != ev.attempt) return;  // worker was removed
        const Unit& u = ev.unit;
        if (ev.attempt_fails) {
          ++counters.failed_attempts;
          record(ev.worker, u, false);
          book_.requeue(ev.worker, u);
        } else if (book_.state(u.config) == ConfigState::stopped || book_.state(u.config) == ConfigState::failed) {
          ++counters.ignored_completions;
          record(ev.worker, u, false);
          BOOST_TEST(!book_.complete(ev.worker, u));
        } else {
          record(ev.worker, u, true);
          auto& epochs = visit_order_[u.config];
          if (static_cast<int32_t>(epochs.size()) <= u.epoch) epochs.resize(u.epoch + 1);
          epochs[u.epoch].push_back(u.partition);
          if (book_.complete(ev.worker, u)) {
            ++counters.epochs_completed;
            ++expected_.epochs_completed[u.config];
            // Validation takes a moment: the config awaits its decision meanwhile.
            double validation = std::uniform_real_distribution<double>(0.0, 0.3)(rng_);
            push(Event{now_ + validation, Event::decision, -1, {}, 0, false, u.config});
          }
        }
        attempts_.erase(it);
        return;
      }
      case Event::decision: {
        if (book_.state(ev.config) != ConfigState::awaiting_decision) return;  // ended meanwhile
        EpochOutcome outcome{ev.config, book_.epoch(ev.config), 1.0, 1.0, 0.5};
        if (procedure_.on_epoch_end(outcome) == EpochDecision::stop) {
          ++counters.early_stops;
          book_.stop(ev.config);
        } else {
          book_.advance(ev.config);
        }
        return;
      }
      case Event::worker_leaves: {
        std::vector<WorkerId> present;
        for (const auto& entry : holdings_) {
          if (book_.has_worker(entry.first)) present.push_back(entry.first);
        }
        if (present.empty()) return;
        WorkerId w = present[std::uniform_int_distribution<size_t>(0, present.size() - 1)(rng_)];
        std::optional<Unit> running = book_.running_on(w);
        std::optional<Unit> lost = book_.remove_worker(w);
        if (running) {
          ++counters.lost_in_flight;
          record(w, *running, false);
          attempts_.erase(w);
          ConfigState s = book_.state(running->config);
          bool live = s != ConfigState::stopped && s != ConfigState::failed;
          BOOST_TEST((lost == (live ? running : std::nullopt)));
        } else {
          BOOST_TEST(!lost.has_value());
        }
        double away = std::uniform_real_distribution<double>(0.5, 3.0)(rng_);
        push(Event{now_ + away, Event::worker_returns, w, {}, 0, false, 0});
        return;
      }
      case Event::worker_returns: book_.add_worker(ev.worker, holdings_.at(ev.worker)); return;
      case Event::late_config:
        ++counters.late_configs;
        add_config(ev.config);
        return;
    }
  }

  void maybe_end_a_config(SimCounters& counters) {
    if (!std::bernoulli_distribution(options_.config_end_p)(rng_)) return;
    std::vector<ConfigId> live;
    for (ConfigId c : book_.configs()) {
      ConfigState s = book_.state(c);
      if (s == ConfigState::pending_epoch || s == ConfigState::awaiting_decision) live.push_back(c);
    }
    if (live.empty()) return;
    ConfigId c = live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng_)];
    ++counters.configs_ended;
    if (std::bernoulli_distribution(0.5)(rng_)) {
      book_.stop(c);
    } else {
      book_.fail(c);
    }
  }

  SimOptions options_;
  std::mt19937_64 rng_;
  MopBook book_;
  std::unique_ptr<SchedulingPolicy> policy_;
  RandomStopProcedure procedure_;
  bool work_conserving_;
  double now_ = 0;
  int64_t next_seq_ = 0, next_attempt_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::map<WorkerId, std::vector<PartitionId>> holdings_;
  std::map<WorkerId, Attempt> attempts_;
  std::map<ConfigId, double> speed_;
  std::vector<UnitRecord> log_;
  ExpectedRun expected_;
  ReplayPolicy::VisitOrder visit_order_;
};

SimOptions random_options(std::mt19937_64& rng) {
  auto in = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  SimOptions o;
  o.workers = in(1, 12);
  o.configs = in(1, 20);
  o.partitions = in(1, 6);
  o.max_epochs = in(1, 4);
  o.embedded = in(0, 3) == 0;
  o.unit_failure_p = in(0, 1) ? 0.05 : 0.0;
  o.worker_removals = in(0, 3);
  o.late_configs = in(0, 2);
  o.config_end_p = in(0, 1) ? 0.01 : 0.0;
  o.early_stop_p = in(0, 2) == 0 ? 0.2 : 0.0;
  for (int32_t c = 0; c < o.configs + o.late_configs; ++c) o.config_epochs.push_back(in(1, o.max_epochs));
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(simulation)

BOOST_AUTO_TEST_CASE(randomized_runs_keep_the_mop_invariants) {
  auto started = std::chrono::steady_clock::now();
  SimCounters counters;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    SimOptions o = random_options(rng);
    BOOST_TEST_CONTEXT("case " << seed << ": " << o.workers << " workers, " << o.configs << " configs, " << o.partitions
                               << " partitions, " << o.max_epochs << " epochs max") {
      Simulation sim(o, std::make_unique<RandomizedPolicy>(seed), seed * 7919, true);
      if (sim.run(counters)) sim.check_outcome();
    }
  }
  // Every rare path ran somewhere, or this test would prove little.
  BOOST_TEST(counters.failed_attempts > 0);
  BOOST_TEST(counters.lost_in_flight > 0);
  BOOST_TEST(counters.ignored_completions > 0);
  BOOST_TEST(counters.configs_ended > 0);
  BOOST_TEST(counters.early_stops > 0);
  BOOST_TEST(counters.late_configs > 0);
  BOOST_TEST(counters.epochs_completed > 1000);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  BOOST_TEST_MESSAGE("200 simulated runs in "
                     << seconds << " s: " << counters.epochs_completed << " epochs, " << counters.failed_attempts
                     << " failed attempts, " << counters.lost_in_flight << " units lost with their worker, "
                     << counters.ignored_completions << " completions of ended configs, " << counters.configs_ended
                     << " configs stopped/failed, " << counters.early_stops << " early stops, " << counters.late_configs
                     << " late configs");
}

BOOST_AUTO_TEST_CASE(replay_reproduces_each_configs_visit_order) {
  SimCounters counters;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    SimOptions o = random_options(rng);
    o.config_end_p = 0;  // the replayed run must do the same epochs
    o.early_stop_p = 0;
    o.late_configs = 0;
    o.unit_failure_p = 0;
    o.worker_removals = 0;
    BOOST_TEST_CONTEXT("case " << seed) {
      Simulation original(o, std::make_unique<RandomizedPolicy>(seed), seed, true);
      if (!original.run(counters)) continue;
      // Another cluster shape, other durations, with failures and churn.
      SimOptions again = o;
      again.workers = std::uniform_int_distribution<int32_t>(1, 12)(rng);
      again.embedded = !o.embedded;
      again.unit_failure_p = 0.1;
      again.worker_removals = 2;
      Simulation replay(again, std::make_unique<ReplayPolicy>(original.visit_order()), seed + 1000, false);
      if (!replay.run(counters)) continue;
      replay.check_outcome();
      BOOST_TEST((replay.visit_order() == original.visit_order()));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
