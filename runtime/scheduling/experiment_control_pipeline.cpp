// ExperimentControl's pipeline configs: a unit of a config whose
// plan has k >= 2 stages takes a crew of k idle workers for one attempt (the
// driver runs the unit in the book; the k - 1 stage hosts leave the book
// until the attempt ends), commits once like a unit alone, or fails whole and
// is pending again. Split from experiment_control.cpp; the actors' side is
// actors/scheduler_pipeline.cpp.
#include <algorithm>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/experiment_control.hpp"

namespace cerebro {

Status ExperimentControl::set_pipeline_stages(ConfigId c, int32_t stages) {
  if (stages < 2)
    contract_violation("ExperimentControl::set_pipeline_stages",
                       fmt::format("config {} needs at least 2 stages, got {}", c, stages));
  // A config created while the run trains gets its stages before it joins
  // (proposed, not yet created); resuming, a recorded one before it rejoins.
  if (!pending_creation_.count(c) && !recorded_.count(c) && !book_.has_config(c))
    return Status::not_found(fmt::format("set_pipeline_stages: unknown config {}", c));
  pipeline_stages_[c] = stages;
  return Status::ok_status();
}

void ExperimentControl::set_fixed_workers(int32_t workers) {
  if (workers < 1)
    contract_violation("ExperimentControl::set_fixed_workers",
                       fmt::format("a cluster needs at least 1 worker, got {}", workers));
  fixed_workers_ = workers;
}

void ExperimentControl::check_pipeline_crews(DispatchBatch& out) {
  // The workers the schedule knows: in the book, and hosting a stage now.
  const int workers_now = static_cast<int>(book_.workers().size() + pipeline_hosts_.size());
  for (const auto& [c, stages] : pipeline_stages_) {
    auto outcome = outcomes_.find(c);
    if (outcome == outcomes_.end() || outcome->second.status != ConfigStatus::running) continue;
    if (book_.state(c) != ConfigState::pending_epoch || book_.config_busy(c) || copy_pending(c)) continue;
    switch (crew_outlook(stages, workers_now, fixed_workers_)) {
      case CrewOutlook::can_form:
        waiting_for_workers_.erase(c);  // a later shortage is reported again
        break;
      case CrewOutlook::waits_for_workers:
        if (waiting_for_workers_.insert(c).second) {
          ControlEvent waits{ControlEvent::Kind::crew_waits};
          waits.config = c;
          waits.count = stages;
          waits.limit = workers_now;
          out.notices.push_back({waits});
        }
        break;
      case CrewOutlook::cannot_form: {
        const std::string error = crew_shortage_error(stages, fixed_workers_);
        book_.fail(c);
        outcomes_[c] = ConfigOutcome{ConfigStatus::failed, error};
        ControlEvent failed{ControlEvent::Kind::config_failed};
        failed.config = c;
        failed.error = error;
        ControlEvents notice{failed};
        config_ended(c, notice);
        out.notices.push_back(std::move(notice));
        break;
      }
    }
  }
}

int32_t ExperimentControl::pipeline_stages(ConfigId c) const {
  auto it = pipeline_stages_.find(c);
  return it == pipeline_stages_.end() ? 1 : it->second;
}

bool ExperimentControl::dispatch_pipeline(WorkerId w, const Unit& unit, const std::vector<WorkerId>& idle,
                                          DispatchBatch& out) {
  const int32_t stages = pipeline_stages(unit.config);
  if (stages < 2) return false;
  // The idle workers still free in this round, w first (the policy picked the
  // unit for w, which holds its partition: w drives when it can).
  std::vector<WorkerId> free{w};
  for (WorkerId other : idle)
    if (other != w && book_.has_worker(other) && !book_.worker_busy(other) && !pipelines_.attempt_of(other))
      free.push_back(other);
  auto crew = choose_pipeline_crew(
      unit, stages, free, [this](WorkerId x, PartitionId p) { return book_.holds(x, p); },
      [this](WorkerId x) { return static_cast<int64_t>(book_.eligible_units(x).size()); });
  if (!crew) return true;  // w waits (reserved) until `stages` workers are idle at once
  book_.start(crew->driver, unit);
  PipelineDispatch p;
  p.driver = make_dispatch(crew->driver, unit);
  p.driver.validate = book_.pending_partitions(unit.config).empty();
  p.hosts = crew->hosts;
  p.label = pipeline_label(*crew);
  for (WorkerId h : crew->hosts) {
    pipeline_hosts_[h] = book_.holdings(h);
    book_.remove_worker(h);  // idle: nothing goes back to the queue
  }
  p.id = pipelines_.start(std::move(*crew));
  out.pipelines.push_back(std::move(p));
  return true;
}

PipelineCrew ExperimentControl::end_pipeline(int64_t attempt) {
  PipelineCrew crew = pipelines_.finish(attempt);
  for (WorkerId h : crew.hosts) {
    auto it = pipeline_hosts_.find(h);
    if (it == pipeline_hosts_.end()) continue;  // lost during the attempt
    book_.add_worker(h, std::move(it->second));
    pipeline_hosts_.erase(it);
  }
  return crew;
}

ControlEvents ExperimentControl::on_pipeline_committed(int64_t attempt, const UnitLogEntry& entry) {
  if (!pipelines_.running(attempt))
    contract_violation("ExperimentControl::on_pipeline_committed",
                       fmt::format("pipeline attempt {} is not running", attempt));
  const PipelineCrew crew = end_pipeline(attempt);
  const Unit logged{entry.config, entry.partition, entry.epoch};
  if (logged != crew.unit)
    contract_violation("ExperimentControl::on_pipeline_committed",
                       fmt::format("pipeline attempt {} ran {} but its entry is {}", attempt, to_string(crew.unit),
                                   to_string(logged)));
  return on_committed(crew.driver, entry);
}

ControlEvents ExperimentControl::on_pipeline_failed(int64_t attempt, const std::string& error) {
  if (!pipelines_.running(attempt)) return {};
  const PipelineCrew crew = end_pipeline(attempt);
  ControlEvent failed{ControlEvent::Kind::pipeline_failed};
  failed.config = crew.unit.config;
  failed.epoch = crew.unit.epoch;
  failed.unit = crew.unit;
  failed.attempt_id = attempt;
  ControlEvents out{failed};
  ControlEvents counted = on_failed(crew.driver, crew.unit, error);
  out.insert(out.end(), counted.begin(), counted.end());
  return out;
}

void ExperimentControl::pipeline_worker_leaves(WorkerId w) {
  auto attempt = pipelines_.attempt_of(w);
  if (!attempt) return;
  if (pipelines_.crew(*attempt).driver == w) {
    end_pipeline(*attempt);  // the driver's unit goes back to the queue with it
  } else {
    pipeline_hosts_.erase(w);  // its stage is gone: the driver's unit fails
  }
}

}  // namespace cerebro
