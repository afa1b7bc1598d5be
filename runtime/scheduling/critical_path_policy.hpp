#pragma once
// CriticalPathPolicy ("critical_path"): a heterogeneity-aware MOP scheduler
// that learns from what the run measures.
//
// UnitTimeModel learns, from the measured train times observe() gets, a
// unit's time as  cost(config) / speed(worker)  per example, starting from
// "all equal". With it the policy estimates
//  - each config's remaining chain: its remaining units one after the other
//    (isolation forbids running them in parallel), each on the fastest known
//    holder of its partition;
//  - the remaining makespan's floor: the remaining work over the cluster's
//    total speed, or over the partition whose fastest holder is slowest (each
//    partition carries an equal share of the work), whichever is longer.
// A config is critical if its chain is at least (1 - kCriticalSlack) of that
// floor, and the longest chain always is: if it waits, the run gets longer.
// An idle worker
//  0. while some measured workers are not linked by shared configs (their
//     relative speeds unknown: a worker that only ran configs no one else ran
//     could be slow or have run heavy configs) or it is unmeasured itself,
//     runs the lightest of kMatchDraws random eligible units that would link
//     it (a real 2-worker run with one worker slowed 4x sent the heavy config
//     to the slow worker without this: it took the slow worker for a fast one
//     that had run a heavy config);
//  0b. if it holds every partition (an embedded cluster) and is not clearly
//     slower than the others (kLongestFirstSlowerThan), runs the idle config
//     with the longest remaining chain (kLongestFirstUpTo);
//  1. runs the eligible critical config with the longest chain, unless this
//     worker is slower than the fastest holder of the partition and running it
//     here would stretch the chain past the floor (heavy units go to fast
//     workers);
//  2. else a config not measured yet (the first round measures everyone, so a
//     long config is known early);
//  3. else picks uniformly among its eligible units, like the randomized
//     policy; but a worker sharing partitions with faster workers redraws (up
//     to kMatchDraws picks) a unit whose config's chain, run there, would
//     exceed the floor, and waits for the faster worker if every pick would;
//     and the fastest holder takes the heaviest of kMatchDraws picks.
// Random order for the rest keeps the configs spread over their epochs so
// every worker keeps finding work: longest-chain-first for all configs marches
// them in lockstep and starves workers at each epoch's end (measured with an
// earlier version: 1.24 x the lower bound at 1,000 configs x 256 equal
// workers, against 1.0004).
//
// Cost per decision: at most kScanLimit idle critical configs, plus the
// randomized policy's O(1) draw (O(configs / 64) when most candidates are
// busy). The critical list is refreshed from the book every configs +
// partitions observations (sooner after a config's first measurement) and
// kept up to date in between by observe() (a config leaves it while it runs).
// Deterministic for a given seed and history. Not thread-safe.

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/scheduling/randomized_policy.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"

namespace cerebro {

// t(config, worker) = cost(config) / speed(worker), learned in log space: each
// observation's surprise is split between the two factors, each moving by
// 1 / (its observations + 1) of it (at most kMemory observations remembered,
// so a worker that slows down is noticed). Unknown factors default to the
// geometric mean of the known ones; an unmeasured config with a cost prior
// (set_prior) costs its prior instead, scaled by the geometric mean of
// measured / prior over the measured configs that have one (the probe that
// made the priors need not run at the workers' pace); before any config is
// measured, one without a prior costs the geometric mean of the priors. Only
// ratios are meaningful.
class UnitTimeModel {
 public:
  static constexpr double kMemory = 50;
  // Ids below this are kept in vectors, others in hash maps.
  static constexpr int32_t kDenseIds = 1 << 20;

  void observe(ConfigId c, WorkerId w, double seconds_per_example);
  // Config c's expected seconds per example before it is measured (> 0).
  void set_prior(ConfigId c, double seconds_per_example);
  bool has_priors() const { return priors_ > 0; }
  bool knows_config(ConfigId c) const {
    const Factor* f = configs_.find(c);
    return f && f->known;
  }
  bool knows_worker(WorkerId w) const {
    const Factor* f = workers_.find(w);
    return f && f->known;
  }
  double cost(ConfigId c) const { return configs_.value_or_mean(c); }
  double speed(WorkerId w) const { return workers_.value_or_mean(w); }
  // Estimated seconds per example; 0 before any observation.
  double seconds_per_example(ConfigId c, WorkerId w) const;
  // Fetches config c's factor into the cache (a hint for observe()).
  void prefetch_config(ConfigId c) const {
    if (static_cast<uint32_t>(c) < configs_.dense.size()) __builtin_prefetch(&configs_.dense[static_cast<uint32_t>(c)]);
  }
  // Sum of the speeds of the workers observed so far.
  double known_speed_sum() const;
  // Observations link a config and a worker; speeds are comparable only
  // between workers linked through shared configs (a worker that only ran
  // configs no one else ran could be slow or run heavy configs: the data
  // cannot tell). Whether every observed worker is linked to every other:
  bool workers_linked() const { return worker_groups_ <= 1; }
  // Whether running config c on worker w would link two groups of workers
  // (or measure the new worker w against known ones): c is known, and w is
  // unknown or not yet linked to c.
  bool would_link(ConfigId c, WorkerId w) const;
  // Refits both factors to the last kWindow observations by alternating least
  // squares (`sweeps` sweeps from the current values), while the model is
  // young (fewer than kYoungObservations per known config and worker): the
  // online updates alone learn a worker's speed slowly when it has run few
  // configs that others ran too, as in a short run. observe() calls it while
  // there are at most kRefitEachUpTo samples (kSweeps sweeps);
  // CriticalPathPolicy at each refresh (2 sweeps).
  void refit(int sweeps);

  static constexpr size_t kWindow = 4096;
  // Observations a config's cost prior is worth in refit().
  static constexpr int64_t kPriorWeight = 2;
  static constexpr int kSweeps = 8;
  static constexpr int64_t kYoungObservations = 64;
  // Up to this many samples every observation refits (O(samples x sweeps)).
  static constexpr size_t kRefitEachUpTo = 256;

 private:
  struct Sample {
    ConfigId config;
    WorkerId worker;
    double log_seconds;
  };
  struct Factor {
    bool known = false;
    bool has_prior = false;  // configs only: prior_log holds a cost prior
    double log = 0;
    double value = 1;  // exp(log), cached
    int64_t observations = 0;
    int32_t node = -1;  // in links_, once observed
    double prior_log = 0;
  };
  // Factors by id: a vector for small non-negative ids, a hash map otherwise.
  // Lookups are inline: the policy asks for costs and speeds ~20 times per
  // decision, and the simulator makes 10^8 decisions.
  struct Factors {
    std::vector<Factor> dense;
    std::unordered_map<int32_t, Factor> sparse;
    double log_sum = 0;  // over the known ones
    int64_t known = 0;
    Factor& at(int32_t id);
    const Factor* find(int32_t id) const {
      // dense never grows past kDenseIds: an id below its size is dense.
      if (static_cast<uint32_t>(id) < dense.size()) return &dense[static_cast<uint32_t>(id)];
      if (id >= 0 && id < kDenseIds) return nullptr;
      return find_sparse(id);
    }
    double value_or_mean(int32_t id) const {
      const Factor* f = find(id);
      if (f && f->known) return f->value;
      if (f && f->has_prior) return prior_value(*f);
      // Nothing measured yet: a config without a prior costs the priors' mean.
      return known || prior_count == 0 ? mean_value() : mean_prior_value();
    }
    double mean_prior_value() const;
    // An unmeasured factor's prior, scaled: exp(prior_log + the mean of
    // log - prior_log over the known factors that have a prior).
    double prior_value(const Factor& f) const;
    // Sum and count of log - prior_log over the known factors with a prior.
    double prior_shift_sum = 0;
    int64_t prior_shift_count = 0;
    double prior_log_sum = 0;  // over every factor with a prior
    int64_t prior_count = 0;
    double mean_log() const { return known ? log_sum / static_cast<double>(known) : 0; }
    // exp(mean_log()), cached until a factor changes.
    double mean_value() const;
    void set(Factor& f, double log);
    void reset_log(Factor& f, double log);  // set without counting an observation

   private:
    const Factor* find_sparse(int32_t id) const;
    mutable double mean_value_ = 1;
    mutable bool mean_stale_ = false;
  };
  Factors configs_, workers_;
  std::vector<Sample> window_;  // the last kWindow observations, a ring
  size_t window_next_ = 0;
  int64_t observations_ = 0;
  int64_t priors_ = 0;                                            // configs with a prior
  std::unordered_map<int32_t, std::pair<double, int64_t>> sums_;  // refit scratch
  // Union-find over the observed configs and workers (nodes), linked by
  // observations, with the number of workers per root.
  int32_t node_of(Factor& f);
  int32_t root(int32_t node) const;
  void link(int32_t a, int32_t b);
  mutable std::vector<int32_t> parent_;
  std::vector<int32_t> workers_in_;  // per root
  int64_t worker_groups_ = 0;        // roots with at least one worker
};

class CriticalPathPolicy : public SchedulingPolicy {
 public:
  // Critical: remaining chain >= (1 - kCriticalSlack) x the remaining floor.
  static constexpr double kCriticalSlack = 0.2;
  static constexpr size_t kMaxCritical = 256;
  // A decision looks at no more than this many idle critical configs, longest
  // chain first, for one that needs a partition the worker holds.
  static constexpr size_t kScanLimit = 32;
  // A worker sharing partitions with faster workers draws up to this many
  // random eligible units for one that does not stretch a chain past the
  // floor; the fastest holder of partitions shared with slower workers draws
  // this many and takes the heaviest.
  static constexpr int kMatchDraws = 4;
  // A worker that holds every partition (the embedded cluster, or full
  // replication) and is not slower than others runs the idle config with the
  // longest remaining chain, if the run has at most this many configs: any
  // config can run anywhere, so this is longest-remaining-processing-time
  // first, which keeps the heavy chains progressing together and leaves
  // light units to fill the end (a 2-worker run with four cnn and four mlp
  // configs left one cnn's last units alone for 14 s under the critical
  // threshold alone). With partitions on single workers it would march the
  // configs in lockstep and starve workers at each epoch's end (below).
  static constexpr size_t kLongestFirstUpTo = 4096;
  // ... unless another holder is this much faster: closer figures are what
  // equal workers of one machine measure. A real 2-worker bench (embedded,
  // 8 configs) fit one worker 20-25% slower for most of the run (the cost
  // priors' bias against the mlps that ran there, kPriorWeight, moves into
  // the worker's speed), so under the 10% rule that worker drew light units
  // at random while heavy chains waited, and a cnn's last unit ran alone at
  // the end (1.5 s idle in 15.7 s). A 4x slower worker still leaves the
  // heavy chains to the fast one.
  static constexpr double kLongestFirstSlowerThan = 1.5;

  explicit CriticalPathPolicy(uint64_t seed) : uniform_(seed) {}

  std::string name() const override { return "critical_path"; }
  void observe(const Observation& observation) override;
  // The prior ranks c among the configs until its first unit is measured:
  // with priors the policy knows the critical configs before any unit ran
  // (every worker counted at the mean speed until measured), so the heavy
  // config with the longest remaining chain starts first.
  void set_cost_prior(ConfigId c, double seconds_per_example) override;
  void prefetch_observation(WorkerId worker, const Unit& u) const override;
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override;

  const UnitTimeModel& model() const { return model_; }
  // The idle critical configs, longest chain first (as of the last refresh or
  // observation of each).
  std::vector<ConfigId> critical() const;

 private:
  struct ConfigProgress {
    int32_t epoch = -1;             // the epoch done_inverse_speed counts
    double done_inverse_speed = 0;  // sum of inverse_speed over its partitions done in it
    int32_t planned_epochs = 0;     // from the book at the last refresh
  };

  double inverse_speed(PartitionId p) const;  // 1 / its fastest known holder's speed
  ConfigProgress& progress(ConfigId c);
  // A bit per config, apart from ConfigProgress so it stays in cache.
  bool is_critical(ConfigId c) const;
  void set_critical(ConfigId c);
  // c's remaining chain from the start of its epoch `epoch`, in seconds per
  // example of each unit (all units have about the same examples, so this
  // orders configs like seconds would).
  double chain(ConfigId c, const ConfigProgress& progress, int32_t epoch) const;
  void refresh(const MopBook& book);
  // The remaining makespan's floor: remaining work over the total speed, or
  // over the partition whose fastest holder is slowest, if that is longer.
  double floor() const;
  void insert_critical(double chain, ConfigId c);
  void erase_critical(ConfigId c);
  std::optional<Unit> choose_critical(WorkerId w, const MopBook& book);
  std::optional<Unit> choose_unmeasured(WorkerId w, const MopBook& book);
  // The idle config with the longest remaining chain, on a worker that holds
  // every partition (O(configs)).
  std::optional<Unit> choose_longest_chain(WorkerId w, const MopBook& book);
  // The lightest of kMatchDraws random eligible units whose config would link
  // w to workers it is not linked to yet (UnitTimeModel::would_link), if any.
  std::optional<Unit> choose_linking(WorkerId w, const MopBook& book);
  // Whether a partition of w has a holder `ratio` times faster than w, and
  // whether one has a holder `ratio` times slower (one pass for both).
  struct OtherHolders {
    bool faster = false;
    bool slower = false;
  };
  OtherHolders other_holders(WorkerId w, const MopBook& book, double ratio = 1.1) const;
  // Whether p's fastest holder is another worker, 10% faster than w, present
  // and still holding p.
  bool faster_holder_present(WorkerId w, PartitionId p, const MopBook& book) const;
  // u's config's remaining chain if w, not the fastest holder, ran u.
  double chain_if_run(const Unit& u, WorkerId w, const MopBook& book);

  UnitTimeModel model_;
  RandomizedPolicy uniform_;
  std::vector<WorkerId> fastest_holder_;  // per partition, -1 until observed
  std::vector<WorkerId> slowest_holder_;  // per partition, -1 until observed
  std::vector<ConfigProgress> progress_;  // by config id, if small and non-negative
  std::unordered_map<ConfigId, ConfigProgress> sparse_progress_;
  std::vector<ConfigId> configs_;  // the book's, refreshed when it has more
  // The critical configs not running (a config leaves when chosen and comes
  // back with its new chain when its unit is observed), longest chain first.
  std::vector<std::pair<double, ConfigId>> critical_;
  std::vector<bool> dense_critical_;  // is_critical by id, if small and non-negative
  std::unordered_set<ConfigId> sparse_critical_;
  std::vector<std::pair<double, ConfigId>> chains_;  // refresh()'s scratch
  std::vector<ConfigId> unmeasured_;                 // configs with no observation yet (some may have one now)
  double total_inverse_ = 0;                         // sum of inverse_speed over the partitions
  double max_inverse_ = 0;                           // the largest inverse_speed
  int32_t partitions_ = 0;
  double remaining_work_ = 0;    // sum of cost x remaining units over live configs
  double total_speed_ = 0;       // of the workers that ran a unit
  double threshold_ = 0;         // chain that makes a config critical, at the last refresh
  int64_t since_refresh_ = -1;   // observations; -1: never refreshed
  bool newly_measured_ = false;  // a config got its first observation since
};

}  // namespace cerebro
