#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "actors/actors.hpp"
#include "runtime/base/fault_injection.hpp"

namespace cerebro {

namespace {

struct worker_state {
  worker_config config;
  // Borrowed partitions by (experiment, partition); dropped on release.
  std::map<std::pair<std::string, PartitionId>, std::shared_ptr<const datasets::Dataset>> leases;
  static inline const char* name = "cerebro.worker";
};

unit_result run_unit(const worker_state& st, const unit_task& task) {
  unit_result r;
  r.config = task.config;
  r.partition = task.partition;
  r.epoch = task.epoch;
  r.worker = st.config.id;
  nlohmann::json params;
  try {
    params = nlohmann::json::parse(task.params_json);
  } catch (const std::exception& e) {
    r.status = UnitStatus::failed;
    r.error = fmt::format("bad hyper-parameters in the task: {}", e.what());
    return r;
  }
  models::UnitInput in;
  in.params = &params;
  in.shape = models::ShapeInfo{task.sample_shape, task.num_classes};
  in.shape.task = datasets::parse_task_kind(task.task).value_or(datasets::TaskKind::classification);
  in.shape.target_stddev = task.target_stddev;
  in.state = &task.state;
  in.partition = st.leases.at({task.experiment, task.partition}).get();
  in.validation = task.validate ? st.leases.at({task.experiment, validation_partition}).get() : nullptr;
  in.seed = task.seed;
  in.augmentation.hflip = task.augment_hflip;
  in.augmentation.random_crop = task.augment_crop_padding > 0;
  in.augmentation.crop_padding = task.augment_crop_padding;
  const auto& faults = FaultInjection::instance();
  if (faults.fail_unit(task.config, task.partition, task.epoch, task.attempt)) {
    r.status = UnitStatus::failed;
    r.error = "injected fault (test)";
    return r;
  }
  auto out = models::train_unit(in);
  if (!out.ok()) {
    r.status = UnitStatus::failed;
    r.error = out.error();
    return r;
  }
  r.status = out->diverged ? UnitStatus::diverged : UnitStatus::ok;
  r.state = std::move(out->state);
  r.train_loss = out->train_loss;
  r.examples = out->examples;
  if (out->validation) {
    r.has_validation = true;
    r.val_loss = out->validation->loss;
    r.val_accuracy = out->validation->accuracy;
    r.val_metrics = out->validation->metrics;
  }
  r.restore_s = out->restore_s;
  r.train_s = out->train_s;
  if (double slow = faults.slowdown(st.config.id); slow > 1) {  // a test's slow worker
    std::this_thread::sleep_for(std::chrono::duration<double>((slow - 1) * out->train_s));
    r.train_s *= slow;
  }
  r.validate_s = out->validate_s;
  r.save_s = out->save_s;
  return r;
}

// Borrows the partitions `task` needs that this worker has not borrowed yet,
// then calls `then`. Borrowing happens once per partition per worker.
// Called with an empty string once the leases are in, or with the error.
using LeaseCallback = std::function<void(const std::string& error)>;

using worker_ptr = worker_actor::stateful_pointer<worker_state>;

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
            [then](const caf::error& e) { then("cannot borrow a partition: " + caf::to_string(e)); });
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
          self->quit(caf::make_error(caf::sec::runtime_error, "injected worker exit (test)"));
          return caf::make_error(caf::sec::runtime_error, "injected worker exit (test)");
        }
        auto promise = self->make_response_promise<unit_result>();
        auto shared = std::make_shared<const unit_task>(std::move(task));
        with_leases(self, shared, [self, shared, promise](const std::string& error) mutable {
          const unit_task& task = *shared;
          if (!error.empty()) {
            unit_result r;
            r.config = task.config;
            r.partition = task.partition;
            r.epoch = task.epoch;
            r.worker = self->state.config.id;
            r.status = UnitStatus::failed;
            r.error = error;
            promise.deliver(std::move(r));
            return;
          }
          promise.deliver(run_unit(self->state, task));
        });
        return promise;
      },
      [self](release_atom, const std::string& experiment) {
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
