#include "actors/pipeline_stage.hpp"

#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "runtime/net/error_category.hpp"
#include "runtime/store/pipeline_state.hpp"

namespace cerebro {

namespace {

struct stage_actor_state {
  std::shared_ptr<models::StageRunner> runner;
  static inline const char* name = "cerebro.pipeline_stage";
};

using stage_ptr = pipeline_stage_actor::stateful_pointer<stage_actor_state>;

pipeline_stage_actor::behavior_type stage_behavior(stage_ptr self, std::shared_ptr<models::StageRunner> runner) {
  self->state.runner = std::move(runner);
  return {
      [self](stage_forward_atom, const stage_tensor& input) -> caf::result<stage_tensor> {
        auto out = self->state.runner->forward(input);
        if (!out.ok()) return to_error(out.status());
        return std::move(out).value();
      },
      [self](stage_loss_atom, const stage_tensor& input, const stage_tensor& target,
             int64_t batch_examples) -> caf::result<double> {
        auto loss = self->state.runner->forward_loss(input, target, batch_examples);
        if (!loss.ok()) return to_error(loss.status());
        return *loss;
      },
      [self](stage_backward_atom, const stage_tensor& gradient) -> caf::result<stage_tensor> {
        auto out = self->state.runner->backward(gradient);
        if (!out.ok()) return to_error(out.status());
        return std::move(out).value();
      },
      [self](stage_step_atom) -> caf::result<bool> {
        if (auto st = self->state.runner->step(); !st.ok()) return to_error(st);
        return true;
      },
      [self](stage_discard_atom) -> caf::result<bool> {
        self->state.runner->discard();
        return true;
      },
      [self](stage_save_atom) -> caf::result<std::string> {
        auto state = self->state.runner->save_state();
        if (!state.ok()) return to_error(state.status());
        return std::move(state).value();
      },
  };
}

}  // namespace

Result<pipeline_stage_actor> spawn_pipeline_stage(caf::actor_system& system, const stage_setup& setup) {
  auto runner =
      models::StageRunner::create(setup.params, setup.shape, setup.stages, setup.index, setup.state, setup.seed);
  if (!runner.ok()) return runner.status();
  std::shared_ptr<models::StageRunner> shared = std::move(runner).value();
  return system.spawn<caf::detached>(stage_behavior, std::move(shared));
}

Result<pipeline_unit_result> train_unit_through_stages(caf::actor_system& system,
                                                       const std::vector<pipeline_stage_actor>& stages,
                                                       const nlohmann::json& params, const models::ShapeInfo& shape,
                                                       const datasets::Dataset& partition, uint64_t seed,
                                                       double timeout_s, const datasets::Augmentation& augmentation) {
  if (stages.empty()) return Status::invalid_argument("a pipeline unit needs at least one stage");
  auto feeder = models::MicroBatchFeeder::create(params, shape, partition, seed, augmentation);
  if (!feeder.ok()) return feeder.status();
  caf::scoped_actor self{system};
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(std::max(0.001, timeout_s) * 1000));
  const size_t k = stages.size();
  Status failed;
  auto fail = [&failed](const caf::error& e) {
    if (failed.ok()) failed = to_status(e).with_context("pipeline unit");
  };
  // Requests are sent at once and answered in order: a stage takes the next
  // micro-batch while the next stage works on the previous one.
  auto send_forward = [&](size_t s, const stage_tensor& a) {
    return self->request(stages[s], timeout, stage_forward_atom::value, a);
  };
  auto send_loss = [&](const stage_tensor& a, const stage_tensor& target, int64_t examples) {
    return self->request(stages[k - 1], timeout, stage_loss_atom::value, a, target, examples);
  };
  auto send_backward = [&](size_t s, const stage_tensor& g) {
    return self->request(stages[s], timeout, stage_backward_atom::value, g);
  };
  using TensorHandle = decltype(send_forward(0, stage_tensor{}));
  using LossHandle = decltype(send_loss(stage_tensor{}, stage_tensor{}, 0));
  auto answer = [&](TensorHandle& h) {
    stage_tensor out;
    h.receive([&out](stage_tensor& t) { out = std::move(t); }, fail);
    return out;
  };
  auto on_every_stage = [&](auto atom) {
    for (const auto& stage : stages) self->request(stage, timeout, atom).receive([](bool) {}, fail);
  };

  pipeline_unit_result result;
  double loss_sum = 0;
  models::MicroBatchFeeder::Batch batch;
  while ((*feeder)->next(batch)) {
    const size_t m = batch.inputs.size();
    // Forward: stage 0 .. k-2, then the last stage's loss.
    std::vector<LossHandle> losses;
    if (k == 1) {
      for (size_t j = 0; j < m; ++j) losses.push_back(send_loss(batch.inputs[j], batch.targets[j], batch.examples));
    } else {
      std::vector<TensorHandle> pending;
      for (size_t j = 0; j < m; ++j) pending.push_back(send_forward(0, batch.inputs[j]));
      for (size_t s = 1; s < k; ++s) {
        std::vector<TensorHandle> next;
        for (size_t j = 0; j < m; ++j) {
          stage_tensor a = answer(pending[j]);
          if (!failed.ok()) return failed;
          if (s + 1 < k) {
            next.push_back(send_forward(s, a));
          } else {
            losses.push_back(send_loss(a, batch.targets[j], batch.examples));
          }
        }
        pending = std::move(next);
      }
    }
    double loss = 0;
    for (auto& h : losses) h.receive([&loss](double v) { loss += v; }, fail);
    if (!failed.ok()) return failed;
    if (!std::isfinite(loss)) {
      on_every_stage(stage_discard_atom::value);
      if (!failed.ok()) return failed;
      result.diverged = true;
      break;
    }
    // Backward: micro-batches in reverse, from the last stage to stage 0.
    std::vector<TensorHandle> pending;
    for (size_t j = m; j-- > 0;) {
      stage_tensor from_loss;
      from_loss.micro_batch = static_cast<int64_t>(j);
      pending.push_back(send_backward(k - 1, from_loss));
    }
    for (size_t s = k - 1; s-- > 0;) {
      std::vector<TensorHandle> next;
      for (auto& h : pending) {
        stage_tensor g = answer(h);
        if (!failed.ok()) return failed;
        next.push_back(send_backward(s, g));
      }
      pending = std::move(next);
    }
    for (auto& h : pending) answer(h);
    if (!failed.ok()) return failed;
    on_every_stage(stage_step_atom::value);
    if (!failed.ok()) return failed;
    loss_sum += loss;
    result.examples += batch.examples;
  }
  std::vector<std::string> states;
  for (const auto& stage : stages) {
    self->request(stage, timeout, stage_save_atom::value)
        .receive([&states](std::string& s) { states.push_back(std::move(s)); }, fail);
    if (!failed.ok()) return failed;
  }
  result.state = pack_stage_states(states);
  result.train_loss = result.examples ? loss_sum / static_cast<double>(result.examples) : 0;
  return result;
}

}  // namespace cerebro
