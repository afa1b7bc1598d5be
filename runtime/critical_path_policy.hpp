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
//    total speed.
// A config whose chain comes within kCriticalSlack of that floor is critical:
// if it waits, the run gets longer. An idle worker runs the eligible critical
// config with the longest chain (charged with the time the unit loses on this
// worker against the fastest holder of its partition, so heavy units go to
// fast workers); with none, it picks uniformly among its eligible units like
// the randomized policy. Random order keeps the configs spread over their
// epochs so every worker keeps finding work; strict longest-chain-first for all
// would march them in lockstep and starve workers at each epoch's end.
//
// Cost per decision: O(critical configs + partitions the worker holds), the
// critical list capped at kMaxCritical; the model and the list are refreshed
// from the book every ~configs/4 observations (amortized O(1)). Deterministic
// for a given seed and history.

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "runtime/randomized_policy.hpp"
#include "runtime/scheduling_policy.hpp"

namespace cerebro {

// t(config, worker) = cost(config) / speed(worker), learned in log space: each
// observation's surprise is split between the two factors, each moving by
// 1 / (its observations + 1) of it (at most kMemory observations remembered,
// so a worker that slows down is noticed). Unknown factors default to the
// geometric mean of the known ones. Only ratios are meaningful.
class UnitTimeModel {
 public:
  static constexpr double kMemory = 50;

  void observe(ConfigId c, WorkerId w, double seconds_per_example);
  bool knows_config(ConfigId c) const;
  bool knows_worker(WorkerId w) const;
  double cost(ConfigId c) const;
  double speed(WorkerId w) const;
  // Estimated seconds per example; 0 before any observation.
  double seconds_per_example(ConfigId c, WorkerId w) const;
  // Sum of the speeds of the workers observed so far.
  double known_speed_sum() const;

 private:
  struct Factor {
    bool known = false;
    double log = 0;
    double value = 1;  // exp(log), cached
    int64_t observations = 0;
  };
  // Factors by id: a vector for small non-negative ids, a hash map otherwise.
  struct Factors {
    std::vector<Factor> dense;
    std::unordered_map<int32_t, Factor> sparse;
    double log_sum = 0;  // over the known ones
    int64_t known = 0;
    Factor& at(int32_t id);
    const Factor* find(int32_t id) const;
    double value_or_mean(int32_t id) const;
    double mean_log() const { return known ? log_sum / static_cast<double>(known) : 0; }
    void set(Factor& f, double log);
  };
  Factors configs_, workers_;
};

class CriticalPathPolicy : public SchedulingPolicy {
 public:
  // Critical: remaining chain >= (1 - kCriticalSlack) x the remaining floor.
  static constexpr double kCriticalSlack = 0.1;
  static constexpr size_t kMaxCritical = 32;

  explicit CriticalPathPolicy(uint64_t seed) : uniform_(seed) {}

  std::string name() const override { return "critical_path"; }
  void observe(const Observation& observation) override;
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override;

  const UnitTimeModel& model() const { return model_; }
  // The configs currently treated as critical, longest chain first.
  const std::vector<ConfigId>& critical() const { return critical_; }

 private:
  struct ConfigProgress {
    int32_t epoch = -1;             // the epoch done_inverse_speed counts
    double done_inverse_speed = 0;  // sum of inverse_speed over its partitions done in it
  };

  double inverse_speed(PartitionId p) const;  // 1 / its fastest known holder's speed
  // c's remaining chain, in seconds per example of each unit (all units have
  // about the same examples, so this orders configs like seconds would).
  double chain(ConfigId c, const MopBook& book) const;
  void refresh(const MopBook& book);
  std::optional<Unit> choose_critical(WorkerId w, const MopBook& book);

  UnitTimeModel model_;
  RandomizedPolicy uniform_;
  std::vector<WorkerId> fastest_holder_;  // per partition, -1 until observed
  std::unordered_map<ConfigId, ConfigProgress> progress_;
  std::vector<ConfigId> configs_;  // the book's, refreshed when it has more
  std::vector<ConfigId> critical_;
  double total_inverse_ = 0;    // sum of inverse_speed over the partitions
  double remaining_work_ = 0;   // sum of cost x remaining units over live configs
  double total_speed_ = 0;      // of the workers that ran a unit
  int64_t since_refresh_ = -1;  // observations; -1: never refreshed
};

}  // namespace cerebro
