#pragma once
// GangPlanner: whether a config trains its next units as a data-parallel gang
// instead of one unit at a time (MOP), and on which workers.
//
// A gang of k ranks covers k of the config's pending partitions of its
// current epoch at once: each rank passes over its own partition with a k-th
// of the config's batch size, and the gradients are averaged by an allreduce
// after every step. So a gang of k takes k x steps_per_unit steps, each rank
// computing about one unit's examples, and its attempt lasts
//
//   gang_s(k) = slowest member's unit time + k x steps_per_unit x allreduce(k) + setup_s
//
// where allreduce(k) = allreduce_s x 2(k-1)/k (a ring: the bandwidth term of
// k ranks against that of 2). It does k units' work, so per unit it costs
// gang_s(k) worker-seconds instead of unit_s, but the config's chain shrinks
// from unit_s to gang_s(k)/k per unit.
//
// The model (estimate_gang) compares two estimates of when the remaining work
// ends, a lower-bound shape like the simulator's:
//
//   MOP:  max(W / n, R x mop_unit_s, other_chain)
//   gang: max((W + R x (gang_s - mop_unit_s)) / n, R x gang_s / k, other_chain)
//
// with W the remaining work of every config (worker-seconds), R the config's
// remaining units, n the workers and other_chain the longest remaining chain
// of another config. A gang wins when it is sooner by more than `margin`: when
// the config is the tail (a single config, the top rungs of Hyperband or ASHA,
// the last configs of an epoch) and its allreduce is cheap against its unit.
//
// Times are learnt from what ExperimentControl or the simulator observes:
// per config the mean time of its MOP units, per worker its speed against
// the configs' means, and the allreduce cost from a probe or from gangs.
// Nothing is measured yet -> no gang under auto.
//
// The model assumes a rank computes its share as fast as a unit alone. On a
// machine whose cores slow each other, at a k-th of the batch and waiting for
// the slowest rank every step, real gangs take longer (measured: a gang rank
// of the cnn 1.6x a MOP unit's time per example on a 2-vCPU VM). So every
// real gang attempt also teaches the planner its measured time against the
// model's estimate, and later estimates are scaled by the mean of those
// ratios (gang_factor): auto stops forming gangs that do not pay here.
//
// Not thread-safe; one per scheduler, next to its SchedulingPolicy.

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/spec/parallelism.hpp"

namespace cerebro {

struct GangCosts {
  double allreduce_s = 0;     // one allreduce of a config's gradients between 2 ranks
  double setup_s = 0;         // forming a gang (rendezvous, process group), per attempt
  double steps_per_unit = 1;  // optimizer steps of one unit (examples per partition / batch size)
  int32_t max_gang = 8;       // most members of one gang, >= 2
  double margin = 0.05;       // auto: the gang's estimate must be this fraction sooner
  // Whether allreduce_s is a known cost (the simulator's) or still to be
  // measured (a real run's): until it is, auto forms no gang (an unmeasured
  // allreduce would look free).
  bool allreduce_known = true;
};

// The seconds of one gang attempt of k ranks whose slowest member needs
// unit_s for a unit alone.
double gang_seconds(double unit_s, int32_t k, const GangCosts& costs);

struct GangEstimateInput {
  double unit_s = 0;            // the config's unit alone on the gang's slowest member
  double mop_unit_s = 0;        // its unit alone on an average worker (0: unit_s)
  int64_t remaining_units = 0;  // the config's, this epoch and the planned ones after it
  double other_work_s = 0;      // every other config's remaining work, worker-seconds
  double other_chain_s = 0;     // the longest remaining chain of another config
  int32_t workers = 1;
  double gang_factor = 1;  // measured gang attempts / gang_seconds (1: none measured)
};

struct GangEstimate {
  int32_t members = 0;
  double gang_s = 0;         // one attempt of the gang
  double mop_finish_s = 0;   // the remaining work's end under MOP
  double gang_finish_s = 0;  // and with this config in gangs of `members`
  bool gang_wins = false;    // gang_finish_s < (1 - margin) x mop_finish_s
};
// The model above for a gang of k (>= 2) members.
GangEstimate estimate_gang(const GangEstimateInput& in, int32_t k, const GangCosts& costs);

class GangPlanner {
 public:
  // invalid_argument for costs out of range (max_gang < 2, negative times, a
  // margin outside [0, 1)), naming the field.
  static Status check(const GangCosts& costs);
  // For costs that pass check(): others are a contract violation.
  GangPlanner(Parallelism mode, GangCosts costs);

  Parallelism mode() const { return mode_; }
  const GangCosts& costs() const { return costs_; }

  // A committed unit that ran alone (what SchedulingPolicy::observe gets).
  void observe(const SchedulingPolicy::Observation& observation);
  // A measured allreduce per step over `members` ranks (a probe or a gang's
  // own timing): updates allreduce_s, normalised to 2 ranks.
  void observe_allreduce(int32_t members, double seconds_per_step);
  // A real gang of `members` ranks took `steps` global steps and spent
  // `allreduce_s` seconds in their allreduces: the allreduce per step as
  // above, and steps_per_unit = steps / members (each rank takes a
  // members-th of the batch, so a unit's steps are steps / members).
  void observe_gang(int32_t members, int64_t steps, double allreduce_s);
  // The same for the gang `members` whose slowest rank trained for
  // `attempt_s`; when the members' unit times are known it also learns the
  // ratio of attempt_s to the model's gang_seconds (gang_factor()).
  void observe_gang(const std::vector<MopBook::GangMember>& members, int64_t steps, double allreduce_s,
                    double attempt_s);
  // The mean measured / estimated gang time so far (1 before any), within [0.25, 10].
  double gang_factor() const;

  // The gang to run instead of unit u alone on worker w (u: the policy's pick,
  // eligible for w): u on w first, then members from `candidates` (idle
  // workers, in order of preference) each holding a different pending
  // partition of u's config. Empty: run u alone. Under mop always empty;
  // under data a gang whenever at least one candidate can join; under auto
  // when estimate_gang says the best k wins. Reads the book, changes nothing.
  std::vector<MopBook::GangMember> plan(WorkerId w, const Unit& u, const std::vector<WorkerId>& candidates,
                                        const MopBook& book);
  // The estimate behind the last auto plan() that got as far as the model.
  const std::optional<GangEstimate>& last_estimate() const { return last_estimate_; }

  // The learnt unit time of config c on worker w, if anything was observed.
  std::optional<double> unit_seconds(ConfigId c, WorkerId w) const;

 private:
  struct Mean {
    double sum = 0;
    int64_t count = 0;
    double value() const { return sum / static_cast<double>(count); }
  };
  // The remaining work of every config and the two longest chains, from an
  // O(configs) sweep of the book. An estimate: it is redone only when 0.5% of
  // the units have been done since (or configs were added), so a decision at
  // 10,000 configs does not sweep them all.
  struct Sweep {
    int64_t units_done = -1;
    int64_t refresh_at = 0;  // units_done at which to sweep again
    size_t configs = 0;
    int32_t workers = 0;
    double work_s = 0;
    ConfigId longest = -1;
    double longest_s = 0, second_s = 0;
  };
  const Sweep& sweep(const MopBook& book);
  double worker_factor(WorkerId w) const;
  std::optional<double> config_seconds(ConfigId c) const;

  Parallelism mode_;
  GangCosts costs_;
  std::unordered_map<ConfigId, Mean> config_means_;
  std::unordered_map<WorkerId, Mean> worker_ratios_;  // train_s / the config's mean so far
  Mean all_units_;
  Mean gang_ratios_;  // real gang attempts: measured / gang_seconds
  std::optional<GangEstimate> last_estimate_;
  Sweep sweep_;
};

}  // namespace cerebro
