// Pipeline stages at the LibTorch level (see pipeline.hpp): splitting a
// config's chain, one stage's forward/backward/step/state, the GPipe pass.
#include "models/pipeline.hpp"

#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "models/flush_denormals.hpp"
#include "models/task.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

using namespace detail;

namespace {

int optimizer_tensors(const TrainingParams& p) {
  switch (p.optimizer) {
    case OptimizerKind::sgd: return p.momentum > 0 ? 1 : 0;  // the momentum buffer
    case OptimizerKind::adam:
    case OptimizerKind::adamw: return 2;  // exp_avg, exp_avg_sq
  }
  return 2;
}

int64_t link_bytes(const ChainLink& link, int optimizer_tensors_per_parameter) {
  int64_t parameters = 0, buffers = 0;
  for (const auto& [name, t] : link.parameters) parameters += t.numel();
  for (const auto& [name, t] : link.buffers) buffers += t.numel();
  return training_memory(parameters, buffers, optimizer_tensors_per_parameter).total();
}

}  // namespace

// ---- measuring and planning ------------------------------------------------

Result<int> optimizer_state_tensors(const nlohmann::json& params) {
  return guarded<int>("hyper-parameters", [&] {
    ParamReader reader(params);
    return optimizer_tensors(TrainingParams::read(reader));
  });
}

Result<ModelChain> measure_chain(const nlohmann::json& params, const ShapeInfo& shape) {
  return guarded<ModelChain>("building the model failed", [&] {
    Trainee t = build(params, shape);
    const int slots = optimizer_tensors(t.training);
    ModelChain chain;
    auto links = t.model->chain();
    if (!links.ok()) {
      int64_t parameters = 0, buffers = 0;
      std::set<const void*> parameter_impls;
      for (const auto& p : t.model->parameters()) {
        parameters += p.numel();
        parameter_impls.insert(p.unsafeGetTensorImpl());
      }
      for (const auto& [name, tensor] : t.model->named_state())
        if (!parameter_impls.count(tensor.unsafeGetTensorImpl())) buffers += tensor.numel();
      chain.link_names = {"model"};
      chain.link_bytes = {training_memory(parameters, buffers, slots).total()};
      chain.not_a_chain = links.error();
      return chain;
    }
    for (const auto& link : *links) {
      chain.link_names.push_back(link.name);
      chain.link_bytes.push_back(link_bytes(link, slots));
    }
    return chain;
  });
}

Result<PipelinePlan> plan_config(const nlohmann::json& params, const ShapeInfo& shape, const PipelineLimits& limits) {
  TrainingParams training;
  try {
    ParamReader reader(params);
    training = TrainingParams::read(reader);
  } catch (const std::exception& e) {
    return Status::invalid_argument(e.what());
  }
  auto chain = measure_chain(params, shape);
  // Its own code: the model does not build for this data, which the
  // config's pilot check reports; the plan has nothing to say about it.
  if (!chain.ok()) return Status::failed_precondition(chain.error());
  PipelineRequest request;
  request.forced = training.parallelism == ModelParallelism::pipeline;
  request.stages = training.stages;
  return plan_pipeline(*chain, request, limits);
}

Result<int> planned_stages(const nlohmann::json& params, const ShapeInfo& shape, const PipelineLimits& limits) {
  // Without a budget only a config that asks for stages can get them: no model to build for the others.
  try {
    ParamReader reader(params);
    if (limits.budget_bytes == 0 && TrainingParams::read(reader).parallelism == ModelParallelism::automatic) return 1;
  } catch (const std::exception& e) {
    return Status::invalid_argument(e.what());
  }
  auto plan = plan_config(params, shape, limits);
  if (!plan.ok()) return plan.status();
  return plan->stages;
}

// ---- one stage ---------------------------------------------------------------

PipelineStage::PipelineStage(int index, int count, std::vector<ChainLink> links, const TrainingParams& training,
                             const ShapeInfo& shape, std::unique_ptr<Model> whole)
    : index_(index), count_(count), links_(std::move(links)), shape_(shape), whole_(std::move(whole)) {
  if (whole_) template_loss_ = whole_->template_loss();
  optimizer_ = make_optimizer(training, parameters());
}

std::vector<torch::Tensor> PipelineStage::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& link : links_)
    for (const auto& [name, t] : link.parameters) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> PipelineStage::named_state() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& link : links_) out.insert(out.end(), link.parameters.begin(), link.parameters.end());
  for (const auto& link : links_) out.insert(out.end(), link.buffers.begin(), link.buffers.end());
  return out;
}

void PipelineStage::set_training(bool on) {
  for (auto& link : links_) link.set_training(on);
}

void PipelineStage::set_generator(const torch::Generator& generator) {
  for (auto& link : links_)
    if (link.set_generator) link.set_generator(generator);
}

// Each compute call flushes denormals (models/flush_denormals.hpp) on
// whichever thread hosts the stage, so a stage computes the same wherever it
// is placed.
torch::Tensor PipelineStage::forward(int64_t micro, const torch::Tensor& input) {
  const FlushDenormalsScope no_denormals;
  // The stage's own graph starts at its input: the previous stage's graph
  // lives in another stage (or process), reached through backward's answer.
  torch::Tensor in = input.detach();
  if (index_ > 0) in.requires_grad_(true);
  torch::Tensor x = in;
  for (auto& link : links_) x = link.forward(x);
  in_flight_[micro] = {in, x};
  return x.detach();
}

double PipelineStage::forward_loss(int64_t micro, const torch::Tensor& input, const torch::Tensor& target,
                                   int64_t batch_examples) {
  if (!is_last()) throw Error(fmt::format("stage {} of {} is not the last: it has no loss", index_, count_));
  const FlushDenormalsScope no_denormals;
  forward(micro, input);
  auto& [in, out] = in_flight_[micro];
  const Objective objective(shape_, template_loss_);
  torch::Tensor summed = objective.summed_loss_tensor(out, target);
  out = summed / static_cast<double>(std::max<int64_t>(1, batch_examples));
  return summed.item<double>();
}

torch::Tensor PipelineStage::backward(int64_t micro, const torch::Tensor& output_gradient) {
  const FlushDenormalsScope no_denormals;
  auto it = in_flight_.find(micro);
  if (it == in_flight_.end())
    throw Error(fmt::format("stage {}: micro-batch {} has no forward in flight", index_, micro));
  auto [in, out] = it->second;
  in_flight_.erase(it);
  if (is_last()) {
    out.backward();
  } else {
    if (!output_gradient.defined() || !output_gradient.sizes().equals(out.sizes()))
      throw Error(
          fmt::format("stage {}: the gradient of micro-batch {} does not match its output's shape", index_, micro));
    out.backward(output_gradient);
  }
  return index_ > 0 ? in.grad() : torch::Tensor();
}

void PipelineStage::step() {
  const FlushDenormalsScope no_denormals;
  optimizer_->step();
  optimizer_->zero_grad();
}

void PipelineStage::discard() {
  in_flight_.clear();
  optimizer_->zero_grad();
}

torch::Tensor PipelineStage::infer(const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  torch::Tensor x = input;
  for (auto& link : links_) x = link.forward(x);
  return x;
}

std::string PipelineStage::save_state() {
  torch::serialize::OutputArchive archive;
  auto state = named_state();
  archive.write("stage", torch::tensor({static_cast<int64_t>(index_), static_cast<int64_t>(count_)}), true);
  archive.write("count", torch::tensor(static_cast<int64_t>(state.size())), true);
  for (size_t i = 0; i < state.size(); ++i) archive.write("s" + std::to_string(i), state[i].second.detach(), true);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer_->save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  std::string out;
  archive.save_to([&out](const void* data, size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  return out;
}

void PipelineStage::restore_state(const std::string& bytes) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  torch::Tensor stage, count;
  archive.read("stage", stage, true);
  if (stage.numel() != 2 || stage[0].item<int64_t>() != index_ || stage[1].item<int64_t>() != count_)
    throw Error(fmt::format("the stored state is not stage {} of {}", index_, count_));
  auto state = named_state();
  archive.read("count", count, true);
  if (count.item<int64_t>() != static_cast<int64_t>(state.size()))
    throw Error(
        fmt::format("stored stage {} has {} tensors, the stage has {}", index_, count.item<int64_t>(), state.size()));
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < state.size(); ++i) {
    torch::Tensor stored;
    archive.read("s" + std::to_string(i), stored, true);
    if (!stored.sizes().equals(state[i].second.sizes()))
      throw Error(fmt::format("stored stage {} tensor {} ({}) has the wrong shape", index_, i, state[i].first));
    state[i].second.copy_(stored);
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer_->load(optimizer_archive);
}

// ---- splitting and the GPipe pass --------------------------------------------

Stages split_into_stages(const nlohmann::json& params, const ShapeInfo& shape, int stages, int only) {
  Trainee t = build(params, shape);
  t.optimizer.reset();  // each stage gets its own
  auto links = t.model->chain();
  if (!links.ok()) throw Error("the model cannot be split into pipeline stages: " + links.error());
  const int slots = optimizer_tensors(t.training);
  std::vector<int64_t> weights;
  for (const auto& link : *links) weights.push_back(link_bytes(link, slots));
  auto first = balanced_split(weights, stages);
  if (!first.ok()) throw Error(first.error());
  // Only the last stage computes the loss; a template's loss lives on the whole model.
  const bool keep_whole = static_cast<bool>(t.model->template_loss());
  Stages out;
  for (int s = 0; s < stages; ++s) {
    if (only >= 0 && s != only) continue;
    size_t begin = (*first)[static_cast<size_t>(s)];
    size_t end = s + 1 < stages ? (*first)[static_cast<size_t>(s) + 1] : links->size();
    // Each stage takes its links from a chain of its own: a chain's links may
    // share forward-time state (the zoo's one dropout per chain, whose
    // generator set_generator replaces), and a stage's dropout must draw from
    // its own stream in one thread exactly as it does alone in its process.
    auto own = t.model->chain();
    if (!own.ok()) throw Error("the model cannot be split into pipeline stages: " + own.error());
    std::vector<ChainLink> mine(own->begin() + static_cast<std::ptrdiff_t>(begin),
                                own->begin() + static_cast<std::ptrdiff_t>(end));
    std::unique_ptr<Model> whole = (s + 1 == stages && keep_whole) ? std::move(t.model) : nullptr;
    out.push_back(std::make_unique<PipelineStage>(s, stages, std::move(mine), t.training, shape, std::move(whole)));
  }
  if (only >= 0 && out.empty()) throw Error(fmt::format("stage {} outside 0..{}", only, stages - 1));
  return out;
}

double gpipe_forward_backward(Stages& stages, const torch::Tensor& x, const torch::Tensor& y, int micro_batches) {
  const int64_t batch = x.size(0);
  const auto ranges = micro_batch_ranges(batch, micro_batches);
  double loss = 0;
  for (size_t j = 0; j < ranges.size(); ++j) {
    auto [begin, end] = ranges[j];
    torch::Tensor a = x.slice(0, begin, end);
    for (size_t s = 0; s + 1 < stages.size(); ++s) a = stages[s]->forward(static_cast<int64_t>(j), a);
    loss += stages.back()->forward_loss(static_cast<int64_t>(j), a, y.slice(0, begin, end), batch);
  }
  if (!std::isfinite(loss)) {
    for (auto& stage : stages) stage->discard();
    return loss;
  }
  for (size_t j = ranges.size(); j-- > 0;) {
    torch::Tensor g = stages.back()->backward(static_cast<int64_t>(j), torch::Tensor());
    for (size_t s = stages.size() - 1; s-- > 0;) g = stages[s]->backward(static_cast<int64_t>(j), g);
  }
  return loss;
}

stage_tensor to_stage_tensor(int64_t micro, const torch::Tensor& t) {
  stage_tensor m;
  m.micro_batch = micro;
  if (!t.defined()) return m;
  torch::Tensor c = t.contiguous();
  if (c.scalar_type() == torch::kInt64) {
    m.integer = true;
  } else if (c.scalar_type() != torch::kFloat32) {
    c = c.to(torch::kFloat32);
  }
  m.shape.assign(c.sizes().begin(), c.sizes().end());
  m.data.assign(static_cast<const char*>(c.data_ptr()), c.numel() * static_cast<int64_t>(c.element_size()));
  return m;
}

torch::Tensor from_stage_tensor(const stage_tensor& m) {
  if (m.shape.empty() && m.data.empty()) return torch::Tensor();
  auto type = m.integer ? torch::kInt64 : torch::kFloat32;
  int64_t numel = 1;
  for (auto d : m.shape) numel *= d;
  const int64_t element = m.integer ? 8 : 4;
  if (numel < 0 || static_cast<int64_t>(m.data.size()) != numel * element)
    throw Error(fmt::format("a stage tensor of shape [{}] carries {} bytes", fmt::join(m.shape, ", "), m.data.size()));
  torch::Tensor t = torch::empty(m.shape, type);
  std::memcpy(t.data_ptr(), m.data.data(), m.data.size());
  return t;
}

}  // namespace cerebro::models
