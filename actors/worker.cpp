#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "actors/actors.hpp"
#include "actors/pipeline_stage.hpp"
#include "models/gang_trainer.hpp"
#include "models/pipeline_runner.hpp"
#include "models/trainee_cache.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/net/pipeline_tasks.hpp"
#include "runtime/store/pipeline_state.hpp"

namespace cerebro {

namespace {

struct worker_state {
  worker_config config;
  // Borrowed partitions by (experiment, partition); dropped on release.
  std::map<std::pair<std::string, PartitionId>, std::shared_ptr<const datasets::Dataset>> leases;
  // The models this worker built, reused when it trains the same config again
  // (a detached actor: its units run one at a time on its own thread).
  std::unique_ptr<models::TraineeCache> trainees = std::make_unique<models::TraineeCache>();
  static inline const char* name = "cerebro.worker";
};

// What the trainer knows of the task's data: its shape, task and how it scores.
models::ShapeInfo shape_of(const unit_task& task) {
  models::ShapeInfo shape{task.sample_shape, task.num_classes};
  shape.task = datasets::parse_task_kind(task.task).value_or(datasets::TaskKind::classification);
  shape.target_stddev = task.target_stddev;
  shape.beam = task.beam;
  return shape;
}

// The trainer's input for `task` from the worker's leases; an error text if
// the task's hyper-parameters are not JSON (`params` must outlive `in`).
std::string prepare_input(const worker_state& st, const unit_task& task, nlohmann::json& params,
                          models::UnitInput& in) {
  try {
    params = nlohmann::json::parse(task.params_json);
  } catch (const std::exception& e) {
    return fmt::format("bad hyper-parameters in the task: {}", e.what());
  }
  in.params = &params;
  in.shape = shape_of(task);
  in.state = &task.state;
  in.partition = st.leases.at({task.experiment, task.partition}).get();
  in.validation = task.validate ? st.leases.at({task.experiment, validation_partition}).get() : nullptr;
  in.seed = task.seed;
  in.augmentation.hflip = task.augment_hflip;
  in.augmentation.random_crop = task.augment_crop_padding > 0;
  in.augmentation.crop_padding = task.augment_crop_padding;
  in.read_ahead = task.read_ahead;
  return {};
}

unit_result result_of(const worker_state& st, const unit_task& task) {
  unit_result r;
  r.config = task.config;
  r.partition = task.partition;
  r.epoch = task.epoch;
  r.worker = st.config.id;
  return r;
}

// The trained unit's state, metrics and timings into r.
void fill_result(unit_result& r, models::UnitOutput& out) {
  r.status = out.diverged ? UnitStatus::diverged : UnitStatus::ok;
  r.state = std::move(out.state);
  r.train_loss = out.train_loss;
  r.examples = out.examples;
  if (out.validation) {
    r.has_validation = true;
    r.val_loss = out.validation->loss;
    r.val_accuracy = out.validation->accuracy;
    r.val_metrics = out.validation->metrics;
  }
  r.restore_s = out.restore_s;
  r.train_s = out.train_s;
  r.validate_s = out.validate_s;
  r.save_s = out.save_s;
}

unit_result run_unit(const worker_state& st, const unit_task& task) {
  unit_result r = result_of(st, task);
  nlohmann::json params;
  models::UnitInput in;
  if (std::string bad = prepare_input(st, task, params, in); !bad.empty()) {
    r.status = UnitStatus::failed;
    r.error = bad;
    return r;
  }
  const auto& faults = FaultInjection::instance();
  if (faults.fail_unit(task.config, task.partition, task.epoch, task.attempt)) {
    r.status = UnitStatus::failed;
    r.error = "injected fault (test)";
    return r;
  }
  auto out = models::train_unit(in, *st.trainees);
  if (!out.ok()) {
    r.status = UnitStatus::failed;
    r.error = out.error();
    return r;
  }
  fill_result(r, *out);
  if (double slow = faults.slowdown(st.config.id); slow > 1) {  // a test's slow worker
    std::this_thread::sleep_for(std::chrono::duration<double>((slow - 1) * out->train_s));
    r.train_s *= slow;
  }
  return r;
}

// One rank of a data-parallel gang. Blocks this (detached)
// worker's thread: the rendezvous goes as blocking requests to the gang's
// board, then Gloo's collectives run over sockets bound to the node's
// cluster address, closed when the session ends here.
gang_result run_gang_unit(caf::actor_system& system, const worker_state& st, const gang_task& g) {
  gang_result out;
  unit_result& r = out.unit;
  r = result_of(st, g.unit);
  nlohmann::json params;
  models::UnitInput in;
  if (std::string bad = prepare_input(st, g.unit, params, in); !bad.empty()) {
    r.status = UnitStatus::failed;
    r.error = bad;
    return out;
  }
  if (FaultInjection::instance().fail_unit(g.unit.config, g.unit.partition, g.unit.epoch, g.unit.attempt)) {
    r.status = UnitStatus::failed;
    r.error = "injected fault (test)";
    return out;
  }
  caf::scoped_actor blocking{system};
  const rendezvous_actor board = g.board;
  const auto wait = std::chrono::milliseconds(static_cast<int64_t>(std::max(1.0, g.timeout_s) * 1000));
  models::RendezvousCall call = [&blocking, board, wait](const rendezvous_request& request) {
    Result<rendezvous_reply> answer = Status::unavailable("the gang's rendezvous board did not answer");
    blocking->request(board, wait, rendezvous_atom::value, request)
        .receive([&](rendezvous_reply& reply) { answer = std::move(reply); },
                 [&](const caf::error& e) {
                   answer = Status::unavailable("the gang's rendezvous board: " + caf::to_string(e));
                 });
    return answer;
  };
  auto session = models::GangSession::open(call, g.gang, st.config.gang_address, g.rank, g.size, g.timeout_s);
  if (!session.ok()) {
    r.status = UnitStatus::failed;
    r.error = session.error();
    return out;
  }
  auto trained = models::train_gang_unit(**session, in);
  if (!trained.ok()) {
    r.status = UnitStatus::failed;
    r.error = trained.error();
    return out;
  }
  fill_result(r, trained->unit);
  r.examples = trained->rank_examples;  // this rank's unit; train_loss is the gang's
  if (g.rank != 0) r.state.clear();     // every rank holds the same state: rank 0's travels
  out.steps = trained->steps;
  out.allreduce_s = trained->allreduce_s;
  return out;
}

// Hosts one stage of a pipeline attempt in this worker's actor
// system: the stage actor is built here (a bad state is an error now) and
// lives until the scheduler ends the attempt. A test's fail_unit rule for the
// unit fails its stage hosts (a stage member's error); the driver ignores it.
Result<pipeline_stage_actor> host_stage(caf::actor_system& system, const stage_host_task& task) {
  const unit_task& unit = task.unit;
  if (FaultInjection::instance().fail_unit(unit.config, unit.partition, unit.epoch, unit.attempt))
    return Status::internal(fmt::format("stage {}: injected fault (test)", task.index));
  nlohmann::json params;
  try {
    params = nlohmann::json::parse(unit.params_json);
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("bad hyper-parameters in the task: {}", e.what()));
  }
  return spawn_pipeline_stage(system,
                              stage_setup{params, shape_of(unit), task.stages, task.index, unit.state, unit.seed});
}

// Drives a pipeline attempt's unit: stage 0 here, the other
// stages on the task's hosts; the GPipe schedule over the partition in the
// order train_unit takes it; at the epoch's last unit the framed state is
// validated. Blocks this (detached) worker's thread.
unit_result run_pipeline_unit(caf::actor_system& system, const worker_state& st, const pipeline_task& task) {
  unit_result r = result_of(st, task.unit);
  auto fail = [&r](const std::string& error) {
    r.status = UnitStatus::failed;
    r.error = error;
    r.state.clear();
    return r;
  };
  nlohmann::json params;
  models::UnitInput in;
  if (std::string bad = prepare_input(st, task.unit, params, in); !bad.empty()) return fail(bad);
  auto parts = unpack_stage_states(task.unit.state);
  if (!parts.ok()) return fail("the config's state: " + parts.error());
  const size_t k = task.hosts.size() + 1;
  if (parts->size() != k)
    return fail(fmt::format("the config's state has {} stages, the attempt {}", parts->size(), k));
  const auto started = std::chrono::steady_clock::now();
  auto first =
      spawn_pipeline_stage(system, stage_setup{params, in.shape, static_cast<int>(k), 0, (*parts)[0], task.unit.seed});
  if (!first.ok()) return fail("stage 0: " + first.error());
  std::vector<pipeline_stage_actor> stages{*first};
  stages.insert(stages.end(), task.hosts.begin(), task.hosts.end());
  auto trained = train_unit_through_stages(system, stages, params, in.shape, *in.partition, task.unit.seed,
                                           task.timeout_s, in.augmentation);
  caf::anon_send_exit(*first, caf::exit_reason::user_shutdown);
  if (!trained.ok()) return fail(trained.error());
  const auto trained_at = std::chrono::steady_clock::now();
  r.status = trained->diverged ? UnitStatus::diverged : UnitStatus::ok;
  r.state = std::move(trained->state);
  r.train_loss = trained->train_loss;
  r.examples = trained->examples;
  r.train_s = std::chrono::duration<double>(trained_at - started).count();
  if (in.validation && !trained->diverged) {
    auto evaluated = models::evaluate_pipeline_state(params, in.shape, r.state, *in.validation);
    if (!evaluated.ok()) return fail("validation: " + evaluated.error());
    r.has_validation = true;
    r.val_loss = evaluated->loss;
    r.val_accuracy = evaluated->accuracy;
    r.val_metrics = evaluated->metrics;
    r.validate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trained_at).count();
  }
  return r;
}

// Borrows the partitions `task` needs that this worker has not borrowed yet,
// then calls `then`. Borrowing happens once per partition per worker.
// Called with an empty string once the leases are in, or with the error.
using LeaseCallback = std::function<void(const std::string& error)>;

using worker_ptr = worker_actor::stateful_pointer<worker_state>;

// A test's worker that dies (fault injection): gone as a lost node's worker
// is, so its unit runs again elsewhere.
caf::error injected_exit() { return make_error(StatusCode::unavailable, "injected worker exit (test)"); }

// The task is shared, not copied, into the callbacks: it carries the state.
using SharedTask = std::shared_ptr<const unit_task>;

void with_leases(worker_ptr self, SharedTask task, LeaseCallback then) {
  std::vector<PartitionId> needed{task->partition};
  if (task->validate) needed.push_back(validation_partition);
  for (auto id : needed) {
    if (self->state.leases.count({task->experiment, id})) continue;
    self->request(self->state.config.directory, caf::infinite, borrow_atom::value, task->experiment, id)
        .then(
            [self, task, then](const partition_lease& lease) {
              self->state.leases[{task->experiment, lease.partition}] = lease.data;
              with_leases(self, task, then);
            },
            [then](const caf::error& e) { then("cannot borrow a partition: " + to_status(e).message()); });
    return;
  }
  then(std::string());
}

worker_actor::behavior_type worker_behavior(worker_ptr self, worker_config config) {
  self->state.config = std::move(config);
  return {
      [self](train_atom, unit_task& task) -> caf::result<unit_result> {
        if (FaultInjection::instance().worker_exit(task.config, task.partition, task.epoch, task.attempt)) {
          // A test's crashing worker: the actor dies with its unit unfinished.
          self->quit(injected_exit());
          return injected_exit();
        }
        auto promise = self->make_response_promise<unit_result>();
        auto shared = std::make_shared<const unit_task>(std::move(task));
        with_leases(self, shared, [self, shared, promise](const std::string& error) mutable {
          const unit_task& leased = *shared;
          if (!error.empty()) {
            unit_result r;
            r.config = leased.config;
            r.partition = leased.partition;
            r.epoch = leased.epoch;
            r.worker = self->state.config.id;
            r.status = UnitStatus::failed;
            r.error = error;
            promise.deliver(std::move(r));
            return;
          }
          promise.deliver(run_unit(self->state, leased));
        });
        return promise;
      },
      [self](gang_atom, gang_task& task) -> caf::result<gang_result> {
        const unit_task& unit = task.unit;
        if (FaultInjection::instance().worker_exit(unit.config, unit.partition, unit.epoch, unit.attempt)) {
          // A test's gang member dying: its peers time out, the attempt fails.
          self->quit(injected_exit());
          return injected_exit();
        }
        auto promise = self->make_response_promise<gang_result>();
        auto shared = std::make_shared<const gang_task>(std::move(task));
        SharedTask as_unit(shared, &shared->unit);
        with_leases(self, as_unit, [self, shared, promise](const std::string& error) mutable {
          if (!error.empty()) {
            gang_result r;
            r.unit = result_of(self->state, shared->unit);
            r.unit.status = UnitStatus::failed;
            r.unit.error = error;
            promise.deliver(std::move(r));
            return;
          }
          promise.deliver(run_gang_unit(self->system(), self->state, *shared));
        });
        return promise;
      },
      [self](stage_host_atom, const stage_host_task& task) -> caf::result<pipeline_stage_actor> {
        auto stage = host_stage(self->system(), task);
        if (!stage.ok()) return to_error(stage.status());
        return *stage;
      },
      [self](pipeline_atom, pipeline_task& task) -> caf::result<unit_result> {
        const unit_task& unit = task.unit;
        if (FaultInjection::instance().worker_exit(unit.config, unit.partition, unit.epoch, unit.attempt)) {
          // A test's driver dying: the attempt fails, its unit is pending again.
          self->quit(injected_exit());
          return injected_exit();
        }
        auto promise = self->make_response_promise<unit_result>();
        auto shared = std::make_shared<const pipeline_task>(std::move(task));
        SharedTask as_unit(shared, &shared->unit);
        with_leases(self, as_unit, [self, shared, promise](const std::string& error) mutable {
          if (!error.empty()) {
            unit_result r = result_of(self->state, shared->unit);
            r.status = UnitStatus::failed;
            r.error = error;
            promise.deliver(std::move(r));
            return;
          }
          promise.deliver(run_pipeline_unit(self->system(), self->state, *shared));
        });
        return promise;
      },
      [self](release_atom, const std::string& experiment) {
        self->state.trainees = std::make_unique<models::TraineeCache>();  // the experiment's models go with it
        for (auto it = self->state.leases.begin(); it != self->state.leases.end();)
          it = it->first.first == experiment ? self->state.leases.erase(it) : std::next(it);
      },
  };
}

}  // namespace

worker_actor spawn_worker(caf::actor_system& system, worker_config config) {
  return system.spawn<caf::detached>(worker_behavior, std::move(config));
}

}  // namespace cerebro
