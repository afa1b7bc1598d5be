// Pipeline units and stage runners (see pipeline_runner.hpp) over the
// LibTorch-level stages of pipeline.hpp.
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <thread>
#include <cmath>

#include <fmt/format.h>

#include "models/augmentation.hpp"
#include "models/computing_threads.hpp"
#include "models/flush_denormals.hpp"
#include "models/pipeline.hpp"
#include "models/task.hpp"
#include "models/thread_block_cache.hpp"
#include "models/trainee.hpp"
#include "runtime/store/pipeline_state.hpp"

namespace cerebro::models {

using namespace detail;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TrainingParams training_of(const nlohmann::json& params) {
  ParamReader reader(params);
  return TrainingParams::read(reader);
}

// A stage's dropout stream: its own, derived from the unit's seed.
uint64_t stage_seed(uint64_t seed, int index) {
  return seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index + 1));
}

// The batches of one pass, in train_pass's order: a permutation drawn first
// from a generator seeded with the unit's seed, batches of batch_size, the
// same augmentation stream, and the task's inputs and targets (models/task.hpp task_targets, task_input).
class UnitBatches {
 public:
  UnitBatches(const datasets::Dataset& data, const ShapeInfo& shape, int64_t batch_size, uint64_t seed,
              datasets::Augmentation augmentation)
      : data_(data),
        shape_(shape),
        batch_size_(batch_size),
        augmentation_(std::move(augmentation)),
        generator_(at::make_generator<at::CPUGeneratorImpl>(seed)),
        augmentation_generator_(at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9e3779b97f4a7c15ull)),
        x_(features_of(data)),
        y_(task_targets(data, shape, seed)),
        order_(torch::randperm(data.size(), generator_, torch::kInt64)) {}

  bool next(torch::Tensor& x, torch::Tensor& y) {
    if (begin_ >= data_.size()) return false;
    auto idx = order_.slice(0, begin_, std::min(begin_ + batch_size_, data_.size()));
    begin_ += batch_size_;
    x = x_.index_select(0, idx);
    if (augmentation_.any()) x = augment_batch(x, augmentation_, augmentation_generator_);
    y = y_.index_select(0, idx);
    x = task_input(shape_, x, y);
    return true;
  }

 private:
  const datasets::Dataset& data_;
  ShapeInfo shape_;
  int64_t batch_size_;
  datasets::Augmentation augmentation_;
  at::Generator generator_, augmentation_generator_;
  torch::Tensor x_, y_, order_;
  int64_t begin_ = 0;
};

// A pipeline's stages seen as one model, for evaluation.
class StagedModel final : public Model {
 public:
  explicit StagedModel(Stages& stages) : stages_(stages) {}
  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = input;
    for (auto& stage : stages_) x = stage->infer(x);
    return x;
  }
  std::vector<torch::Tensor> parameters() override {
    std::vector<torch::Tensor> out;
    for (auto& stage : stages_)
      for (auto& p : stage->parameters()) out.push_back(p);
    return out;
  }
  std::vector<std::pair<std::string, torch::Tensor>> named_state() override {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (auto& stage : stages_)
      for (auto& s : stage->named_state()) out.push_back(s);
    return out;
  }
  void set_training(bool on) override {
    for (auto& stage : stages_) stage->set_training(on);
  }
  Status export_torchscript(const std::string&) override {
    return Status::failed_precondition("a pipeline state is exported stage by stage, not as one TorchScript file");
  }
  LossFunction template_loss() override { return whole() ? whole()->template_loss() : LossFunction{}; }
  MetricsFunction template_metrics() override { return whole() ? whole()->template_metrics() : MetricsFunction{}; }

 private:
  Model* whole() { return stages_.back()->whole_model(); }
  Stages& stages_;
};

Stages restored_stages(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state) {
  auto parts = unpack_stage_states(state);
  if (!parts.ok()) throw Error(parts.status());
  Stages stages = split_into_stages(params, shape, static_cast<int>(parts->size()));
  for (size_t s = 0; s < stages.size(); ++s) stages[s]->restore_state((*parts)[s]);
  return stages;
}

std::string packed_state(Stages& stages) {
  std::vector<std::string> parts;
  for (auto& stage : stages) parts.push_back(stage->save_state());
  return pack_stage_states(parts);
}

}  // namespace

Result<std::string> initial_pipeline_state(const nlohmann::json& params, const ShapeInfo& shape, int stages,
                                           uint64_t seed) {
  return guarded<std::string>("pipeline initial state", [&] {
    const SeededWeights seeded(seed);  // as initial_state draws the whole model's weights
    Stages split = split_into_stages(params, shape, stages);
    return packed_state(split);
  });
}

Result<UnitOutput> train_pipeline_unit(const UnitInput& in) {
  return guarded<UnitOutput>("pipeline training failed", [&] {
    const BlockCacheScope buffers_stay_on_this_thread;
    const ComputingThread computing;
    const FlushDenormalsScope no_denormals;
    UnitOutput out;
    auto t0 = Clock::now();
    const TrainingParams training = training_of(*in.params);
    Stages stages = restored_stages(*in.params, in.shape, *in.state);
    for (size_t s = 0; s < stages.size(); ++s) {
      stages[s]->set_generator(at::make_generator<at::CPUGeneratorImpl>(stage_seed(in.seed, static_cast<int>(s))));
      stages[s]->set_training(true);
    }
    out.restore_s = since(t0);

    auto t1 = Clock::now();
    UnitBatches batches(*in.partition, in.shape, training.batch_size, in.seed, in.augmentation);
    torch::Tensor x, y;
    double loss_sum = 0;
    while (batches.next(x, y)) {
      double loss = gpipe_forward_backward(stages, x, y, training.micro_batches);
      if (!std::isfinite(loss)) {
        out.diverged = true;
        break;
      }
      for (auto& stage : stages) stage->step();
      loss_sum += loss;
      out.examples += x.size(0);
    }
    out.train_s = since(t1);
    out.train_loss = out.examples ? loss_sum / static_cast<double>(out.examples) : 0;
    if (in.validation && !out.diverged) {
      auto t2 = Clock::now();
      StagedModel model(stages);
      out.validation = evaluate_model(model, in.shape, *in.validation);
      out.validate_s = since(t2);
    }
    auto t3 = Clock::now();
    out.state = packed_state(stages);
    out.save_s = since(t3);
    return out;
  });
}

Result<Evaluation> evaluate_pipeline_state(const nlohmann::json& params, const ShapeInfo& shape,
                                           const std::string& state, const datasets::Dataset& data) {
  return guarded<Evaluation>("pipeline evaluation failed", [&] {
    Stages stages = restored_stages(params, shape, state);
    StagedModel model(stages);
    return evaluate_model(model, shape, data);
  });
}

Result<std::string> whole_model_state(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state) {
  if (!is_pipeline_state(state)) return state;
  return guarded<std::string>("a pipeline state as the whole model's", [&] {
    Stages stages = restored_stages(params, shape, state);
    std::map<std::string, torch::Tensor> trained;
    for (auto& stage : stages)
      for (auto& [name, tensor] : stage->named_state()) trained[name] = tensor;
    auto whole = build(params, shape);
    torch::NoGradGuard no_grad;
    for (auto& [name, tensor] : whole.model->named_state()) {
      auto it = trained.find(name);
      if (it == trained.end()) throw Error(fmt::format("no stage holds {}", name));
      tensor.copy_(it->second);
    }
    return save_state(whole);
  });
}

// ---- StageRunner ---------------------------------------------------------------

struct StageRunner::Impl {
  std::unique_ptr<PipelineStage> stage;
  at::Generator generator;
  // The intra-op threads of the thread that built the stage, and the thread
  // that last ran it with them. A stage actor runs in a thread of its own
  // whose OpenMP thread count is the runtime's default, not necessarily what
  // LibTorch set for the builder's thread (OMP_NUM_THREADS unset: they
  // differed), and a kernel split over another number of threads sums in
  // another order: the stage would not reproduce the in-process pipeline.
  int threads = 1;
  std::thread::id adopted_by;
  void adopt_threads() {
    if (std::this_thread::get_id() == adopted_by) return;
    at::set_num_threads(threads);
    adopted_by = std::this_thread::get_id();
  }
};

StageRunner::StageRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StageRunner::~StageRunner() = default;
int StageRunner::index() const { return impl_->stage->index(); }
int StageRunner::stages() const { return impl_->stage->count(); }

Result<std::unique_ptr<StageRunner>> StageRunner::create(const nlohmann::json& params, const ShapeInfo& shape,
                                                         int stages, int index, const std::string& stage_state,
                                                         uint64_t seed) {
  return guarded<std::unique_ptr<StageRunner>>(fmt::format("pipeline stage {} of {}", index, stages), [&] {
    if (index < 0 || index >= stages) throw Error(fmt::format("stage {} outside 0..{}", index, stages - 1));
    auto impl = std::make_unique<Impl>();
    Stages split = split_into_stages(params, shape, stages, index);
    impl->stage = std::move(split.front());
    impl->stage->restore_state(stage_state);
    impl->threads = at::get_num_threads();
    impl->adopted_by = std::this_thread::get_id();
    impl->generator = at::make_generator<at::CPUGeneratorImpl>(stage_seed(seed, index));
    impl->stage->set_generator(impl->generator);
    impl->stage->set_training(true);
    return std::unique_ptr<StageRunner>(new StageRunner(std::move(impl)));
  });
}

Result<stage_tensor> StageRunner::forward(const stage_tensor& input) {
  return guarded<stage_tensor>(fmt::format("pipeline stage {} forward", index()), [&] {
    impl_->adopt_threads();
    if (impl_->stage->is_last()) throw Error("the last stage takes its input with the targets (forward_loss)");
    return to_stage_tensor(input.micro_batch, impl_->stage->forward(input.micro_batch, from_stage_tensor(input)));
  });
}

Result<double> StageRunner::forward_loss(const stage_tensor& input, const stage_tensor& target,
                                         int64_t batch_examples) {
  return guarded<double>(fmt::format("pipeline stage {} loss", index()), [&] {
    impl_->adopt_threads();
    return impl_->stage->forward_loss(input.micro_batch, from_stage_tensor(input), from_stage_tensor(target),
                                      batch_examples);
  });
}

Result<stage_tensor> StageRunner::backward(const stage_tensor& output_gradient) {
  return guarded<stage_tensor>(fmt::format("pipeline stage {} backward", index()), [&] {
    impl_->adopt_threads();
    return to_stage_tensor(output_gradient.micro_batch,
                           impl_->stage->backward(output_gradient.micro_batch, from_stage_tensor(output_gradient)));
  });
}

Status StageRunner::step() {
  auto done = guarded<bool>(fmt::format("pipeline stage {} step", index()), [&] {
    impl_->adopt_threads();
    impl_->stage->step();
    return true;
  });
  return done.ok() ? Status::ok_status() : done.status();
}

void StageRunner::discard() { impl_->stage->discard(); }

Result<std::string> StageRunner::save_state() {
  return guarded<std::string>(fmt::format("pipeline stage {} state", index()),
                              [&] { return impl_->stage->save_state(); });
}

// ---- MicroBatchFeeder ------------------------------------------------------------

struct MicroBatchFeeder::Impl {
  int micro_batches = 1;
  std::unique_ptr<UnitBatches> batches;
};

MicroBatchFeeder::MicroBatchFeeder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MicroBatchFeeder::~MicroBatchFeeder() = default;

Result<std::unique_ptr<MicroBatchFeeder>> MicroBatchFeeder::create(const nlohmann::json& params, const ShapeInfo& shape,
                                                                   const datasets::Dataset& partition, uint64_t seed,
                                                                   const datasets::Augmentation& augmentation) {
  return guarded<std::unique_ptr<MicroBatchFeeder>>("pipeline batches", [&] {
    const TrainingParams training = training_of(params);
    auto impl = std::make_unique<Impl>();
    impl->micro_batches = training.micro_batches;
    impl->batches = std::make_unique<UnitBatches>(partition, shape, training.batch_size, seed, augmentation);
    return std::unique_ptr<MicroBatchFeeder>(new MicroBatchFeeder(std::move(impl)));
  });
}

bool MicroBatchFeeder::next(Batch& batch) {
  torch::Tensor x, y;
  if (!impl_->batches->next(x, y)) return false;
  batch = Batch();
  batch.examples = x.size(0);
  const auto ranges = micro_batch_ranges(batch.examples, impl_->micro_batches);
  for (size_t j = 0; j < ranges.size(); ++j) {
    batch.inputs.push_back(to_stage_tensor(static_cast<int64_t>(j), x.slice(0, ranges[j].first, ranges[j].second)));
    batch.targets.push_back(to_stage_tensor(static_cast<int64_t>(j), y.slice(0, ranges[j].first, ranges[j].second)));
  }
  return true;
}

}  // namespace cerebro::models
