#pragma once
// Pipeline units on k workers, the plain part of dispatching them:
// which workers one pipeline attempt takes, and the attempts that run.
//
// A config whose plan (pipeline_plan.hpp) has k >= 2 stages trains each unit
// (config, partition p, epoch) on k workers at once. The worker holding p
// drives the unit (it feeds its partition's micro-batches in the order
// train_unit takes them) and hosts stage 0; k - 1 other idle workers host
// stages 1..k-1. Unlike a data-parallel gang (k units on k workers), an
// attempt is ONE unit: it commits once (one framed pipeline state, one unit
// log entry saying "pipeline over k stages" and on which workers), or fails
// whole: every member goes back to the schedule and the unit is pending again
// from the config's last durable state.
//
// ExperimentControl dispatches with these (experiment_control_pipeline.cpp);
// docs/CLUSTER.md "Pipeline stages".

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"

namespace cerebro {

// The workers of one pipeline attempt, in stage order.
struct PipelineCrew {
  Unit unit;
  WorkerId driver = 0;          // holds unit.partition; hosts stage 0
  std::vector<WorkerId> hosts;  // stage s (1..k-1) on hosts[s - 1]
  int stages() const { return 1 + static_cast<int>(hosts.size()); }
  std::vector<WorkerId> members() const;  // driver, then the hosts
};

// Chooses the crew of `unit` over `stages` stages among `idle` workers (in the
// order the schedule prefers them), or nullopt when fewer than `stages` are
// idle or none of them holds the unit's partition. The driver is the first
// idle worker that holds the partition. The hosts are the other idle workers
// that MOP has the least use for: fewest `runnable_units` (units they could
// start now), ties in `idle`'s order.
std::optional<PipelineCrew> choose_pipeline_crew(const Unit& unit, int stages, const std::vector<WorkerId>& idle,
                                                 const std::function<bool(WorkerId, PartitionId)>& holds,
                                                 const std::function<int64_t(WorkerId)>& runnable_units);

// The unit log's and summary's words for how a unit trained as a pipeline:
// "pipeline over 2 stages (workers 3, 1)".
std::string pipeline_label(const PipelineCrew& crew);

// A pipeline config's crew against the cluster's size. A crew forms only
// once `stages` workers are idle at once, so while the cluster has fewer the
// config cannot train; it must not wait in silence:
//  - workers may still join (a cluster whose agents join and rejoin, or a
//    worker being respawned): the config waits, and the shell says so once;
//  - no worker can join beyond `fixed_workers` (> 0: an embedded cluster,
//    whose dead workers are respawned) and the stages outnumber them: the
//    config fails with crew_shortage_error.
// `workers_now` counts the workers the schedule knows (hosts of running
// attempts included); fixed_workers 0: workers may join.
enum class CrewOutlook { can_form, waits_for_workers, cannot_form };
CrewOutlook crew_outlook(int stages, int workers_now, int fixed_workers);
// "config 4 waits for 3 idle workers for its pipeline stages; the cluster has 2"
std::string crew_wait_message(ConfigId config, int stages, int workers);
// "it trains as a pipeline over 3 stages, but the cluster has 2 workers and no
// more can join"
std::string crew_shortage_error(int stages, int workers);

// The pipeline attempts that run, by id. A worker is in at most one.
class PipelineAttempts {
 public:
  // Registers a crew and returns the attempt's id. A crew of fewer than 2
  // stages, with a worker twice or a worker already in an attempt is a
  // contract violation (the caller forms crews from idle workers).
  int64_t start(PipelineCrew crew);
  // The attempt that worker w is in, if any.
  std::optional<int64_t> attempt_of(WorkerId w) const;
  bool running(int64_t attempt) const { return attempts_.count(attempt) > 0; }
  const PipelineCrew& crew(int64_t attempt) const;  // a contract violation if not running
  // Ends an attempt (committed or failed) and returns its crew: on failure
  // the shell requeues crew.unit and hands every member back to the schedule.
  // A contract violation if not running.
  PipelineCrew finish(int64_t attempt);
  size_t size() const { return attempts_.size(); }

 private:
  std::map<int64_t, PipelineCrew> attempts_;
  std::map<WorkerId, int64_t> member_of_;
  int64_t next_ = 1;
};

}  // namespace cerebro
