// The scheduler actor's pipeline attempts: the config's framed state is
// split into its stages, each host worker builds its stage's actor (on its
// own node), then the driver trains the unit through them and answers one
// result, committed once like a unit alone. Any failure ends the attempt
// whole: its stage actors are stopped, its unit is pending again from the
// config's last durable state (ExperimentControl::on_pipeline_failed) and the
// hosts go back to the schedule.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/net/pipeline_tasks.hpp"
#include "runtime/store/pipeline_state.hpp"

namespace cerebro::scheduler_detail {

namespace {

// One attempt as the shell follows it.
struct PipelineRun {
  PipelineDispatch p;
  double start_s = 0;
  StateBytes state;                          // the config's framed state, for the driver
  std::vector<pipeline_stage_actor> stages;  // stage s on stages[s - 1], as the hosts answer
  size_t hosted = 0;
  bool ended = false;  // failed, or its result came back
};
using SharedRun = std::shared_ptr<PipelineRun>;

void stop_stages(const SharedRun& run) {
  for (auto& stage : run->stages)
    if (stage) caf::anon_send_exit(stage, caf::exit_reason::user_shutdown);
}

void pipeline_failed(scheduler_ptr self, const SharedRun& run, const std::string& error) {
  if (run->ended) return;
  run->ended = true;
  stop_stages(run);
  const ControlEvents events = self->state.config.control->on_pipeline_failed(run->p.id, error);
  if (!events.empty()) report(self, events);
  apply_search(self);
  dispatch(self);
}

void commit_pipeline(scheduler_ptr self, const SharedRun& run, unit_result r) {
  const WorkerId driver = run->p.driver.worker;
  r.worker = driver;
  r.result_s = self->state.elapsed();
  r.pipeline_workers.push_back(driver);
  r.pipeline_workers.insert(r.pipeline_workers.end(), run->p.hosts.begin(), run->p.hosts.end());
  // The driver stays in the attempt until the commit answers; lost meanwhile,
  // it leaves the book only then (the unit, durable by then, must not run twice).
  self->state.roster->commit_started({driver});
  self->request(self->state.config.checkpoint, caf::infinite, commit_atom::value, std::move(r), run->p.driver.seed,
                run->start_s, self->state.elapsed())
      .then(
          [self, run, driver](const UnitLogEntry& entry) {
            self->state.unit_span_s += self->state.elapsed() - run->start_s;
            report(self, self->state.config.control->on_pipeline_committed(run->p.id, entry));
            apply_search(self);
            if (!leave_after_commit(self, {driver})) dispatch(self);
          },
          [self, run, driver](const caf::error& e) {
            // Not durable, so not done: the unit runs again.
            report(self, self->state.config.control->on_pipeline_failed(run->p.id,
                                                                        "commit failed: " + to_status(e).message()));
            apply_search(self);
            if (!leave_after_commit(self, {driver})) dispatch(self);
          });
}

void on_driver_result(scheduler_ptr self, const SharedRun& run, unit_result r) {
  if (run->ended || !self->state.config.control->pipeline_running(run->p.id)) {
    run->ended = true;
    stop_stages(run);
    report(self, fmt::format("late result of the pipeline attempt of {} dropped", to_string(run->p.driver.unit)));
    return;
  }
  if (r.status == UnitStatus::failed)
    return pipeline_failed(self, run, fmt::format("driver (worker {}): {}", run->p.driver.worker, r.error));
  run->ended = true;
  stop_stages(run);
  commit_pipeline(self, run, std::move(r));
}

// Every stage is hosted: the driver trains the unit through them.
void drive(scheduler_ptr self, const SharedRun& run) {
  auto worker = self->state.workers.find(run->p.driver.worker);
  if (worker == self->state.workers.end()) return pipeline_failed(self, run, "the driver is gone");
  pipeline_task task;
  task.unit = make_task(self, run->p.driver, std::move(run->state));
  task.hosts = run->stages;
  task.timeout_s = self->state.config.gang_timeout_s;
  self->request(worker->second, caf::infinite, pipeline_atom::value, std::move(task))
      .then([self, run](unit_result& r) { on_driver_result(self, run, std::move(r)); },
            [self, run](const caf::error& e) {
              // The driver died: the down handler ended the attempt and its
              // unit is pending again; only the stages are left to stop.
              if (!self->state.config.control->pipeline_running(run->p.id)) {
                run->ended = true;
                stop_stages(run);
                return;
              }
              pipeline_failed(self, run, "the driver did not answer: " + to_status(e).message());
            });
}

void host_stages(scheduler_ptr self, const SharedRun& run, std::vector<std::string> parts) {
  const int32_t k = run->p.stages();
  run->stages.resize(static_cast<size_t>(k - 1));
  const auto wait =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(1.0, self->state.config.gang_timeout_s) * 1000));
  for (int32_t s = 1; s < k; ++s) {
    const WorkerId host = run->p.hosts[static_cast<size_t>(s - 1)];
    auto worker = self->state.workers.find(host);
    if (worker == self->state.workers.end())
      return pipeline_failed(self, run, fmt::format("stage {}: its host worker {} is gone", s, host));
    stage_host_task task;
    task.unit = make_task(self, run->p.driver, std::move(parts[static_cast<size_t>(s)]));
    task.stages = k;
    task.index = s;
    self->request(worker->second, wait, stage_host_atom::value, std::move(task))
        .then(
            [self, run, s](pipeline_stage_actor& stage) {
              if (run->ended) {
                caf::anon_send_exit(stage, caf::exit_reason::user_shutdown);
                return;
              }
              run->stages[static_cast<size_t>(s - 1)] = std::move(stage);
              if (++run->hosted == run->stages.size()) drive(self, run);
            },
            [self, run, s, host](const caf::error& e) {
              pipeline_failed(self, run, fmt::format("stage {} on worker {}: {}", s, host, to_status(e).message()));
            });
  }
}

}  // namespace

void run_pipeline(scheduler_ptr self, const PipelineDispatch& p) {
  auto run = std::make_shared<PipelineRun>();
  run->p = p;
  run->start_s = self->state.elapsed();
  report(self, fmt::format("{} trains as a {}", to_string(p.driver.unit), p.label));
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, p.driver.unit.config)
      .then(
          [self, run](StateBytes& state) {
            if (!self->state.config.control->pipeline_running(run->p.id)) return;  // its driver was lost
            auto parts = unpack_stage_states(state);
            if (!parts.ok()) return pipeline_failed(self, run, "the config's state: " + parts.error());
            if (static_cast<int32_t>(parts->size()) != run->p.stages())
              return pipeline_failed(
                  self, run,
                  fmt::format("the config's state has {} stages, its plan {}", parts->size(), run->p.stages()));
            run->state = std::move(state);
            host_stages(self, run, std::move(parts).value());
          },
          [self, run](const caf::error& e) {
            if (state_unavailable(self, run->p.driver.unit.config, e)) return;
            if (!self->state.config.control->pipeline_running(run->p.id)) return;
            pipeline_failed(self, run, "cannot load the state: " + to_status(e).message());
          });
}

}  // namespace cerebro::scheduler_detail
