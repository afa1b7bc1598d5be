// Training, evaluation, state (de)serialization and export of one config.
#include <malloc.h>

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "datasets/batch_read_ahead.hpp"
#include "models/augmentation.hpp"
#include "models/captions.hpp"
#include "models/cost_probe.hpp"
#include "models/computing_threads.hpp"
#include "models/flush_denormals.hpp"
#include "models/fused_adam.hpp"
#include "models/model.hpp"
#include "models/state_format.hpp"
#include "models/task.hpp"
#include "models/thread_block_cache.hpp"
#include "models/trainee.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/spec/metric.hpp"

namespace cerebro::models {

// Shared with the gang trainer (models/trainee.hpp declares what it uses).
namespace detail {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

DataShape to_shape(const ShapeInfo& s) { return DataShape{s.sample_shape, s.num_classes, s.task}; }

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainingParams& p, std::vector<torch::Tensor> params) {
  switch (p.optimizer) {
    case OptimizerKind::sgd:
      return std::make_unique<torch::optim::SGD>(
          params,
          torch::optim::SGDOptions(p.lr).momentum(p.momentum).nesterov(p.nesterov).weight_decay(p.weight_decay));
    case OptimizerKind::adamw:
      return std::make_unique<FusedAdamW>(params, torch::optim::AdamWOptions(p.lr).weight_decay(p.weight_decay));
    case OptimizerKind::adam: break;
  }
  return std::make_unique<FusedAdam>(params, torch::optim::AdamOptions(p.lr).weight_decay(p.weight_decay));
}

namespace {
std::recursive_mutex& weight_draws() {
  static std::recursive_mutex mutex;
  return mutex;
}
}  // namespace

SeededWeights::SeededWeights(uint64_t seed) : lock_(weight_draws()) { torch::manual_seed(seed); }

// Reads every key (ParamError on a bad one) and builds model + optimizer.
Trainee build(const nlohmann::json& params, const ShapeInfo& shape) {
  const std::lock_guard<std::recursive_mutex> drawing(weight_draws());
  ParamReader reader(params);
  Trainee t;
  t.training = TrainingParams::read(reader);
  t.model = build_model(t.training.model, reader, to_shape(shape));
  auto unread = reader.unread_keys();
  if (!unread.empty())
    throw ParamError(fmt::format("unknown hyper-parameter{} {} for model {}", unread.size() > 1 ? "s" : "",
                                 fmt::join(unread, ", "), t.training.model));
  t.optimizer = make_optimizer(t.training, t.model->parameters());
  return t;
}

// Our own format (models/state_format.hpp) for the optimizers it knows;
// LibTorch's archive otherwise. `size_hint`: the expected size of an archive
// (a unit's resulting state is as large as the state it started from),
// reserved up front so it is written into one buffer without regrowing it.
std::string save_state(Trainee& t, size_t size_hint) {
  if (raw_state_supports(*t.optimizer)) return save_raw_state(*t.model, *t.optimizer);
  return save_archive_state(t, size_hint);
}

std::string save_archive_state(Trainee& t, size_t size_hint) {
  torch::serialize::OutputArchive archive;
  auto state = t.model->named_state();
  archive.write("count", torch::tensor(static_cast<int64_t>(state.size())), true);
  for (size_t i = 0; i < state.size(); ++i) archive.write("s" + std::to_string(i), state[i].second.detach(), true);
  torch::serialize::OutputArchive optimizer_archive;
  t.optimizer->save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  // Written straight into the string that becomes the state: no stream
  // buffer and no copy out of it.
  std::string out;
  out.reserve(size_hint);
  archive.save_to([&out](const void* data, size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  return out;
}

void restore_state(Trainee& t, const std::string& bytes) {
  if (is_raw_state(bytes)) return restore_raw_state(*t.model, *t.optimizer, bytes);
  // A LibTorch archive (states written before our format). The optimizer's
  // state is replaced, not merged: a reused trainee keeps nothing of its last unit.
  t.optimizer->state().clear();
  // Read where the bytes lie (an istringstream would copy the whole state).
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  auto state = t.model->named_state();
  torch::Tensor count;
  archive.read("count", count, true);
  if (count.item<int64_t>() != static_cast<int64_t>(state.size()))
    throw Error(fmt::format("stored state has {} tensors, the model has {}", count.item<int64_t>(), state.size()));
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < state.size(); ++i) {
    torch::Tensor stored;
    archive.read("s" + std::to_string(i), stored, true);
    if (!stored.sizes().equals(state[i].second.sizes()))
      throw Error(fmt::format("stored state tensor {} ({}) has the wrong shape", i, state[i].first));
    state[i].second.copy_(stored);
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  t.optimizer->load(optimizer_archive);
}

// Borrowed views of a dataset (no copy: the partition owns the memory).
torch::Tensor features_of(const datasets::Dataset& d) {
  std::vector<int64_t> shape{d.size()};
  shape.insert(shape.end(), d.sample_shape.begin(), d.sample_shape.end());
  return torch::from_blob(const_cast<float*>(d.feature_data()), shape, torch::kFloat32);
}

struct PassResult {
  double mean_loss = 0;
  int64_t examples = 0;
  bool diverged = false;
};

// A gathered batch as a tensor that keeps the batch's buffer alive (no copy).
// The unit fails (it runs again) when the reader could not gather it.
torch::Tensor tensor_of(Result<datasets::GatheredBatch> gathered, const std::vector<int64_t>& sample_shape) {
  if (!gathered.ok()) throw Error(gathered.status());
  datasets::GatheredBatch batch = std::move(gathered).value();
  if (!batch) throw Error("the read-ahead ended before the pass did", StatusCode::internal);  // a bug, not bad input
  std::vector<int64_t> shape{batch.rows};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  float* data = batch.features.get();
  return torch::from_blob(
      data, shape, [keep = std::move(batch.features)](void*) mutable { keep.reset(); }, torch::kFloat32);
}

// One training pass over `data` in the order of a seeded permutation. `read_ahead`: a memory-mapped
// partition's next batches are gathered on a background thread (datasets/batch_read_ahead.hpp) instead of
// by index_select on this one; the batches are the same bytes either way.
PassResult train_pass(Trainee& t, const ShapeInfo& shape, const datasets::Dataset& data, uint64_t seed,
                      const datasets::Augmentation& augmentation = {}, bool read_ahead = false) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  // Augmentation draws from a stream of its own: the batch order and dropout stay those of the seed.
  auto augmentation_generator = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9e3779b97f4a7c15ull);
  t.model->set_generator(generator);
  t.model->set_training(true);
  const Objective objective(shape, *t.model);
  auto x = features_of(data);
  auto y = task_targets(data, shape, seed);
  auto order = torch::randperm(data.size(), generator, torch::kInt64);
  // Declared after `order`, which it reads: destroyed (its thread joined) first, also when a batch throws.
  std::optional<datasets::BatchReadAhead> reader;
  if (read_ahead && data.is_mapped())
    reader.emplace(data, order.data_ptr<int64_t>(), data.size(), t.training.batch_size);
  PassResult r;
  double loss_sum = 0;
  for (int64_t begin = 0; begin < data.size(); begin += t.training.batch_size) {
    auto idx = order.slice(0, begin, std::min(begin + t.training.batch_size, data.size()));
    auto xb = reader ? tensor_of(reader->next(), data.sample_shape) : x.index_select(0, idx);
    if (augmentation.any()) xb = augment_batch(xb, augmentation, augmentation_generator);
    auto yb = y.index_select(0, idx);
    t.optimizer->zero_grad();
    auto loss = objective.mean_loss(t.model->forward(task_input(shape, xb, yb)), yb);
    double value = loss.item<double>();
    if (!std::isfinite(value)) {
      r.diverged = true;
      break;
    }
    loss.backward();
    t.optimizer->step();
    loss_sum += value * static_cast<double>(idx.size(0));
    r.examples += idx.size(0);
  }
  r.mean_loss = r.examples ? loss_sum / static_cast<double>(r.examples) : 0;
  return r;
}

Evaluation evaluate_model(Model& model, const ShapeInfo& shape, const datasets::Dataset& data) {
  torch::NoGradGuard no_grad;
  model.set_training(false);
  const Objective objective(shape, model);
  MetricAccumulator metrics(shape, model.template_metrics());
  auto x = features_of(data);
  auto y = task_targets(data, shape, 0);
  Evaluation e;
  double loss_sum = 0;
  const int64_t batch = evaluation_batch(shape);
  for (int64_t begin = 0; begin < data.size(); begin += batch) {
    auto end = std::min(begin + batch, data.size());
    auto yb = y.slice(0, begin, end);
    auto out = model.forward(task_input(shape, x.slice(0, begin, end), yb));
    loss_sum += objective.summed_loss(out, yb);
    metrics.add(out, yb);
  }
  // A template with its own metrics decides what its output is: greedy captions need the task's logits.
  if (shape.task == datasets::TaskKind::captioning && data.size() > 0 && !model.template_metrics())
    metrics.add_captions(caption_bleu(model, data, batch, shape.beam));
  e.examples = data.size();
  if (e.examples) e.loss = loss_sum / static_cast<double>(e.examples);
  e.metrics = metrics.result(&e.accuracy);
  return e;
}

}  // namespace detail
using namespace detail;

void configure_threads(int intra_op_threads) { torch::set_num_threads(std::max(1, intra_op_threads)); }

void configure_allocator() {
  install_block_cache_allocator();
  // Fixed thresholds also turn off glibc's dynamic threshold, which LibTorch's
  // allocation pattern defeats (measured: faults every step without this).
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
  // One arena, the main one, for every thread. A thread's own arena grows in
  // heaps of at most 64 MB and unmaps a heap as soon as it is empty, whatever
  // the trim threshold: a worker whose arena also holds its model and data
  // mapped and unmapped a heap every step. Measured, 4 cnn configs at batch
  // 256 on 2 workers: 5.58 million page faults and 94 s without, 0.13 million
  // and 32 s with; some units took 3 to 4 times as long as the same units on
  // the other worker (quickstart seeds 42, 7, 11). Only threads that have not
  // allocated yet follow it: call this before starting any.
  mallopt(M_ARENA_MAX, 1);
}

double calibrate_speed() {
  torch::NoGradGuard no_grad;
  auto a = torch::ones({256, 256});
  auto b = torch::ones({256, 256});
  const double flops_per_product = 2.0 * 256 * 256 * 256;
  int64_t products = 0;
  auto start = Clock::now();
  while (since(start) < 0.2) {
    for (int i = 0; i < 10; ++i) a = torch::mm(a, b) / 256.0;
    products += 10;
  }
  return static_cast<double>(products) * flops_per_product / since(start) / 1e9;
}

Status check_params(const nlohmann::json& params, const ShapeInfo& shape) {
  try {
    build(params, shape);
  } catch (const ParamError& e) {
    return Status::of(e.code(), e.what());
  } catch (const std::exception&) {
    // Builds but does not fit the data: initial_state reports it per config.
  }
  return Status::ok_status();
}

Status check_template(const nlohmann::json& params, const ShapeInfo& shape, const datasets::Dataset& pilot,
                      const std::string& metric, bool builtin_metric) {
  auto checked = guarded<bool>("training template", [&] {
    // A model that does not build or run on this data is check_params' or the pilot check's to report.
    std::optional<Trainee> t;
    try {
      t.emplace(build(params, shape));
    } catch (const std::exception&) {
      return true;
    }
    auto loss = t->model->template_loss();
    auto metrics = t->model->template_metrics();
    if (!metrics && !builtin_metric)
      throw Error(
          fmt::format("the experiment ranks by val_{}, which is no built-in metric, but the model has no "
                      "metrics(output, target) method to compute it",
                      metric));
    const int64_t n = std::min<int64_t>(2, pilot.size());
    if ((!loss && !metrics) || n == 0) return true;
    t->model->set_training(false);
    torch::Tensor out, target;
    try {
      torch::NoGradGuard no_grad;
      auto [input, first_targets] = first_rows(pilot, shape, n);
      out = t->model->forward(input);
      target = first_targets;
    } catch (const std::exception&) {
      return true;
    }
    torch::NoGradGuard no_grad;
    if (loss) Objective(shape, *t->model).mean_loss(out, target);  // throws naming loss when not a scalar
    if (metrics) {
      MetricAccumulator check(shape, metrics);
      check.add(out, target);  // throws naming metrics when a value is not a scalar
      auto values = check.result();
      if (quantity_named(metric) != Quantity::loss && !values.count(metric)) {
        std::vector<std::string> names;
        for (const auto& [name, value] : values) names.push_back(name);
        throw Error(
            fmt::format("the template's metrics(output, target) returns no \"{}\" (the experiment ranks by "
                        "val_{}); it returns: {}",
                        metric, metric, fmt::join(names, ", ")));
      }
    }
    return true;
  });
  return checked.ok() ? Status::ok_status() : checked.status();
}

Result<std::string> initial_state(const nlohmann::json& params, const ShapeInfo& shape, const datasets::Dataset& pilot,
                                  uint64_t seed) {
  return guarded<std::string>("pilot check failed", [&]() -> std::string {
    const SeededWeights seeded(seed);
    auto t = build(params, shape);
    int64_t n = std::min<int64_t>(2, pilot.size());
    if (n == 0) throw Error("no examples to run the pilot batch on");
    t.model->set_training(false);
    torch::NoGradGuard no_grad;
    auto out = t.model->forward(first_rows(pilot, shape, n).first);
    // A template with its own loss and metrics decides what its output is.
    const bool own_objective = t.model->template_loss() && t.model->template_metrics();
    if (!own_objective) check_output_shape(shape, out, n);
    return save_state(t);
  });
}

Result<double> TorchCostProbe::seconds_per_example(const nlohmann::json& params) {
  return guarded<double>("cost probe failed", [&] {
    auto t = build(params, shape_);
    if (sample_.size() == 0) throw Error("no examples to time a training step on");
    auto generator = at::make_generator<at::CPUGeneratorImpl>(0);
    t.model->set_generator(generator);
    t.model->set_training(true);
    const Objective objective(shape_, *t.model);
    auto x = features_of(sample_);
    auto y = task_targets(sample_, shape_, 0);
    const int64_t batch = std::min<int64_t>(t.training.batch_size, sample_.size());
    double fastest = 0;
    for (int step = 0; step <= kTimedSteps; ++step) {
      // Consecutive batches (wrapping), gathered like train_pass gathers them.
      int64_t begin = (static_cast<int64_t>(step) * batch) % std::max<int64_t>(1, sample_.size() - batch + 1);
      auto idx = torch::arange(begin, begin + batch, torch::kInt64);
      auto started = Clock::now();
      auto xb = x.index_select(0, idx);
      auto yb = y.index_select(0, idx);
      t.optimizer->zero_grad();
      auto loss = objective.mean_loss(t.model->forward(task_input(shape_, xb, yb)), yb);
      loss.backward();
      t.optimizer->step();
      double seconds = since(started);
      if (step > 0 && (fastest == 0 || seconds < fastest)) fastest = seconds;  // step 0 warms up
    }
    return std::max(fastest, 1e-9) / static_cast<double>(batch);
  });
}

namespace detail {

void train_restored(Trainee& t, const UnitInput& in, UnitOutput& out) {
  const BlockCacheScope buffers_stay_on_this_thread;
  const ComputingThread computing;
  const FlushDenormalsScope no_denormals;
  auto t1 = Clock::now();
  auto pass = train_pass(t, in.shape, *in.partition, in.seed, in.augmentation, in.read_ahead);
  out.train_s = since(t1);
  out.train_loss = pass.mean_loss;
  out.examples = pass.examples;
  out.diverged = pass.diverged;

  if (in.validation && !pass.diverged) {
    auto t2 = Clock::now();
    out.validation = evaluate_model(*t.model, in.shape, *in.validation);
    out.validate_s = since(t2);
  }
  auto t3 = Clock::now();
  out.state = save_state(t, in.state->size() + 1024);
  out.save_s = since(t3);
}

}  // namespace detail

Result<UnitOutput> train_unit(const UnitInput& in) {
  return guarded<UnitOutput>("training failed", [&] {
    UnitOutput out;
    auto t0 = Clock::now();
    auto t = build(*in.params, in.shape);
    restore_state(t, *in.state);
    out.restore_s = since(t0);
    train_restored(t, in, out);
    return out;
  });
}

Result<Evaluation> evaluate_state(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                                  const datasets::Dataset& data) {
  return guarded<Evaluation>("evaluation failed", [&] {
    auto t = build(params, shape);
    restore_state(t, state);
    return evaluate_model(*t.model, shape, data);
  });
}

Result<int64_t> parameter_count(const nlohmann::json& params, const ShapeInfo& shape) {
  return guarded<int64_t>("building the model failed", [&] {
    auto t = build(params, shape);
    int64_t count = 0;
    for (const auto& p : t.model->parameters()) count += p.numel();
    return count;
  });
}

Result<ModelCost> model_cost(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                             const datasets::Dataset& data) {
  return guarded<ModelCost>("measuring the model failed", [&] {
    auto t = build(params, shape);
    restore_state(t, state);
    ModelCost cost;
    for (const auto& p : t.model->parameters()) cost.parameters += p.numel();
    torch::NoGradGuard no_grad;
    t.model->set_training(false);
    auto x = features_of(data);
    auto y = task_targets(data, shape, 0);
    const int64_t batch = 256;
    auto start = Clock::now();
    for (int64_t begin = 0; begin < data.size(); begin += batch) {
      const int64_t end = std::min(begin + batch, data.size());
      auto out = t.model->forward(task_input(shape, x.slice(0, begin, end), y.slice(0, begin, end)));
      (void)out.argmax(1).sum().item<int64_t>();  // waits for the result
    }
    if (data.size() > 0) cost.inference_ms = 1000.0 * since(start) / static_cast<double>(data.size());
    return cost;
  });
}

Status export_model(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                    const std::string& path) {
  auto done = guarded<bool>("export failed", [&] {
    auto t = build(params, shape);
    restore_state(t, state);
    t.model->set_training(false);
    auto s = t.model->export_torchscript(path);
    if (!s.ok()) throw Error(s.message());
    return true;
  });
  return done.ok() ? Status::ok_status() : done.status();
}

Result<ReferenceRun> reference_training(const nlohmann::json& params, const ShapeInfo& shape,
                                        const datasets::Dataset& train, const datasets::Dataset& validation, int epochs,
                                        uint64_t seed) {
  return guarded<ReferenceRun>("reference training failed", [&] {
    const SeededWeights seeded(seed);
    auto t = build(params, shape);
    ReferenceRun run;
    auto start = Clock::now();
    for (int e = 0; e < epochs; ++e) {
      train_pass(t, shape, train, seed + 1 + static_cast<uint64_t>(e));
      run.final_val_accuracy = evaluate_model(*t.model, shape, validation).accuracy;
    }
    run.seconds = since(start);
    return run;
  });
}

}  // namespace cerebro::models
