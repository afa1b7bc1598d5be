// Data-parallel gang training over c10d ProcessGroupGloo (see
// gang_trainer.hpp); the sessions are models/gang_session.cpp's.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "models/captions.hpp"
#include "models/computing_threads.hpp"
#include "models/flush_denormals.hpp"
#include "models/gang_session_impl.hpp"
#include "models/task.hpp"
#include "models/thread_block_cache.hpp"
#include "models/trainee.hpp"
#include "runtime/base/fault_injection.hpp"

namespace cerebro::models {

using namespace detail;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

namespace {

// One sum of a float tensor over the gang. A small tensor goes by direct
// exchange: every rank sends it to every other rank and adds what it
// receives, in rank order, so every rank holds the same bits. A large one
// goes by the group's (ring) allreduce, which sends less per rank. Why: each
// allreduce passes through the group's worker thread and the ring's
// ready-notifications, which cost far more than the bytes here. Measured
// with 2 ranks on loopback (threads of one process, 2 vCPUs), per sum of
// 207,000 floats (the cnn's gradients): allreduce 1.91-2.56 ms, exchange
// 0.45-0.86 ms; with 4 ranks 5.50 against 2.98 ms. With 4 ranks at 2M floats
// the exchange sends 3x what a rank sends in the ring and loses (36.6
// against 16.2 ms); with 2 ranks at 2M floats both take 7.3-8.0 ms. Hence
// the exchange while (ranks - 1) x floats stays within kExchangeFloats.
//
// The exchange goes over the session's exchange context (GangSession::Impl):
// Gloo pairs in synchronous mode, written and read by this thread, where
// c10d's send and recv would hand every message to the event loop thread,
// which runs only when a core is free (idle_priority_device).
// Measured on 2 vCPUs, zoo cnn, 2 ranks as threads, against c10d's send
// and recv, interleaved: a sum alone 0.35 ms against 0.28-0.58 ms
// (allreduce-probe, 1000 sums, 5 rounds); 844 training steps
// (allreduce-probe --train 27000, 5 rounds) 4.49-4.87 s against 4.77-5.89
// s, the gang over the same threads without sums 1.15 against 1.25
// (medians). A rank spins while it waits for its peers (at most the gang's
// timeout, then it throws) only while the process's computing threads fit
// its cores (waiting_may_spin); else it sleeps in the socket's read, which
// alone gained little (4.83-5.42 s against 4.96-5.66 s in 4 rounds) and
// loses where ranks outnumber cores (3 ranks on 2 vCPUs: 1.2 ms a sum
// against 0.6 ms by c10d's send and recv). The exchange sends in chunks of
// kChunkFloats, each followed by receiving the peers' same chunk, so that
// no write waits for a peer that writes too: a chunk fits a socket's send buffer, which Gloo sizes to the message and
// Linux caps at 2 x net.core.wmem_max (425,984 bytes by default).
class GangSum {
 public:
  static constexpr int64_t kExchangeFloats = 1 << 20;
  static constexpr int64_t kChunkFloats = 1 << 16;  // 256 KB

  GangSum(GangSession::Impl& gang, int tag, int64_t numel) : gang_(&gang), tag_(tag) {
    if (static_cast<int64_t>(gang.size - 1) * numel > kExchangeFloats) return;  // allreduce
    for (int r = 0; r < gang.size; ++r)
      from_.push_back(r == gang.rank ? torch::Tensor() : torch::empty({numel}, torch::kFloat32));
  }

  // `t` (contiguous floats) must stay untouched until finish(). An
  // allreduce starts here; the exchange runs in finish(), on this thread.
  void start(torch::Tensor t) {
    t_ = std::move(t);
    if (!from_.empty()) return;
    std::vector<torch::Tensor> tensors{t_};
    work_ = gang_->process_group().allreduce(tensors);
  }

  // Waits for the sum (a peer gone or past the timeout throws); `t` then
  // holds it. The exchange adds in rank order: ranks below this one summed
  // into the first received buffer, then this rank's own (addition
  // commutes, so own + prefix is prefix + own bit for bit), then the rest.
  void finish() {
    if (from_.empty()) {
      work_->wait();
      work_.reset();
      return;
    }
    exchange();
    const int own = gang_->rank;
    if (own > 0) {
      for (int r = 1; r < own; ++r) from_[0].add_(from_[r]);
      t_.add_(from_[0]);
    }
    for (int r = own + 1; r < gang_->size; ++r) t_.add_(from_[r]);
  }

 private:
  void exchange() {
    const int own = gang_->rank, size = gang_->size;
    const size_t bytes = static_cast<size_t>(t_.numel()) * sizeof(float);
    if (send_.empty()) {  // Gloo buffers bound to this sum's memory, made once
      ::gloo::Context& context = gang_->exchange_context();
      send_.resize(size);
      receive_.resize(size);
      for (int r = 0; r < size; ++r) {
        if (r == own) continue;
        auto& pair = context.getPair(r);
        send_[r] = pair->createSendBuffer(tag_, t_.data_ptr(), bytes);
        receive_[r] = pair->createRecvBuffer(tag_, from_[r].data_ptr(), bytes);
      }
      bound_to_ = t_.data_ptr();
    }
    if (bound_to_ != t_.data_ptr()) throw Error("a gang sum's tensor moved between steps");
    gang_->choose_exchange_wait();
    const size_t chunk = kChunkFloats * sizeof(float);
    for (size_t offset = 0; offset < bytes; offset += chunk) {
      const size_t length = std::min(chunk, bytes - offset);
      for (int r = 0; r < size; ++r) {
        if (r == own) continue;
        send_[r]->send(offset, length, offset);
        send_[r]->waitSend();  // written already: synchronous mode
      }
      for (int r = 0; r < size; ++r) {
        if (r != own) receive_[r]->waitRecv();
      }
    }
  }

  GangSession::Impl* gang_;
  int tag_;  // the exchange's Gloo slot: one per sum alive at once
  torch::Tensor t_;
  c10::intrusive_ptr<c10d::Work> work_;  // allreduce
  std::vector<torch::Tensor> from_;      // exchange: what each other rank sent (own rank's undefined)
  std::vector<std::unique_ptr<::gloo::transport::Buffer>> send_, receive_;
  const void* bound_to_ = nullptr;
};

// Gradients live in one flat buffer, [parameters ..., examples, summed loss]:
// each parameter's .grad is a view of its slice, so backward accumulates
// straight into what the gang sums (no allocation, no copy in or out per
// step). The parameters are cut into buckets of consecutive slices, ordered
// last parameter first (the order backward produces them): a post-hook on
// each parameter's gradient accumulator starts its bucket's sum as soon as
// the bucket is complete (as DDP does), so a large model's last layers are
// on their way by allreduce while backward still computes the first ones
// (an exchange runs when it is waited for, see GangSum). Buckets start
// strictly in that order on every rank, so the collectives match even where
// backward reaches them in another order or not at all (a rank whose
// partition ran out runs no backward and starts them all).
class FlatGradients {
 public:
  // A bucket closes once it holds 4 MB of floats: the zoo's models at their
  // default sizes sum in one bucket, a large model's gradients in few.
  // Overlapping sums with backward does not pay here: Gloo's loop thread
  // reads messages only when a core is free (idle_priority_device), and
  // every extra bucket is more messages, each dear on this paravirtualised
  // guest. Measured on 2 vCPUs, zoo cnn, idle-priority loop, 844 steps
  // (allreduce-probe --train 27000, medians of 3 interleaved rounds): one
  // bucket 7.69 s, a first bucket of 256 KB then the rest 8.19 s. (With the
  // loop at normal priority the 256 KB first bucket had won: rank 0 waited
  // 1.41 s after backward against 1.87 s.)
  static constexpr int64_t kBucketFloats = 1024 * 1024;

  FlatGradients(GangSession::Impl& gang, std::vector<torch::Tensor> params) : params_(std::move(params)) {
    std::vector<int64_t> offsets;
    for (const auto& p : params_) {
      offsets.push_back(numel_);
      numel_ += p.numel();
    }
    flat_ = torch::zeros({numel_ + 2}, torch::kFloat32);
    for (size_t i = 0; i < params_.size(); ++i) {
      params_[i].mutable_grad() = flat_.slice(0, offsets[i], offsets[i] + params_[i].numel()).view_as(params_[i]);
    }
    // Buckets from the last parameter backwards; each a contiguous range.
    bucket_of_.assign(params_.size(), 0);
    for (size_t i = params_.size(); i-- > 0;) {
      if (buckets_.empty() || buckets_.back().end - buckets_.back().begin >= kBucketFloats) {
        // The first bucket also carries the step's counts (set before backward).
        int64_t end = buckets_.empty() ? numel_ + 2 : offsets[i] + params_[i].numel();
        buckets_.push_back({end, end, 0, 0});
      }
      Bucket& b = buckets_.back();
      b.begin = offsets[i];
      ++b.members;
      bucket_of_[i] = buckets_.size() - 1;
    }
    for (size_t b = 0; b < buckets_.size(); ++b)
      sums_.emplace_back(gang, static_cast<int>(b), buckets_[b].end - buckets_[b].begin);
    for (size_t i = 0; i < params_.size(); ++i) {
      auto accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
      if (!accumulator) continue;  // not a leaf that needs a gradient: its bucket flushes after backward
      accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
            ready(i);
            return outputs;
          }));
      accumulators_.push_back(std::move(accumulator));  // the hooks live as long as this object
    }
  }

  FlatGradients(const FlatGradients&) = delete;  // the hooks point at this object
  FlatGradients& operator=(const FlatGradients&) = delete;

  int64_t numel() const { return numel_; }
  torch::Tensor& flat() { return flat_; }

  // A new step: gradients, example count and loss back to zero.
  void begin_step() {
    flat_.zero_();
    for (auto& b : buckets_) b.ready = 0;
    launched_ = 0;
  }
  // Every bucket not started yet, in order; then the step's example count
  // and summed loss. Called once backward is done (or skipped).
  void flush() {
    while (launched_ < buckets_.size()) launch_bucket();
  }
  // The step's example count and summed loss, summed over the gang with the
  // first bucket: set them before that bucket starts (before backward).
  void set_counts(double examples, double loss) {
    flat_[numel_] = static_cast<float>(examples);
    flat_[numel_ + 1] = static_cast<float>(loss);
  }
  // Waits for every sum of the step.
  void wait() {
    for (size_t b = 0; b < launched_; ++b) sums_[b].finish();
  }

 private:
  struct Bucket {
    int64_t begin, end;  // floats of the flat buffer
    int members;         // parameters
    int ready;           // of them, with their gradient accumulated this step
  };

  void ready(size_t param) {
    Bucket& b = buckets_[bucket_of_[param]];
    ++b.ready;
    while (launched_ < buckets_.size() && buckets_[launched_].ready == buckets_[launched_].members) launch_bucket();
  }
  void launch_bucket() {
    const Bucket& b = buckets_[launched_];
    sums_[launched_++].start(flat_.slice(0, b.begin, b.end));
  }

  std::vector<torch::Tensor> params_;
  int64_t numel_ = 0;
  torch::Tensor flat_;
  std::vector<Bucket> buckets_;
  std::vector<GangSum> sums_;  // one per bucket
  std::vector<size_t> bucket_of_;
  size_t launched_ = 0;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
};

}  // namespace

namespace {

// Point-to-point tags of the validation, apart from the buckets' (0, 1, ...).
constexpr int kValidationTag = 1 << 20;

// Sends a tensor's sizes, then (if it has rows) its data, to rank 0.
void send_outputs(GangSession::Impl& gang, torch::Tensor outputs) {
  constexpr int64_t kMaxDims = 7;
  if (outputs.dim() > kMaxDims) throw Error(fmt::format("a model output of {} dimensions", outputs.dim()));
  std::vector<int64_t> header(kMaxDims + 1, 0);
  header[0] = outputs.dim();
  for (int64_t d = 0; d < outputs.dim(); ++d) header[d + 1] = outputs.size(d);
  std::vector<torch::Tensor> sizes{torch::tensor(header, torch::kInt64)};
  gang.process_group().send(sizes, 0, kValidationTag)->wait();
  if (outputs.numel() == 0) return;
  std::vector<torch::Tensor> data{std::move(outputs)};
  gang.process_group().send(data, 0, kValidationTag + 1)->wait();
}

// Rank 0: what send_outputs sent from rank `from` (an empty tensor for no rows).
torch::Tensor receive_outputs(GangSession::Impl& gang, int from) {
  std::vector<torch::Tensor> sizes{torch::zeros({8}, torch::kInt64)};
  gang.process_group().recv(sizes, from, kValidationTag)->wait();
  auto header = sizes[0];
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < header[0].item<int64_t>(); ++d) shape.push_back(header[d + 1].item<int64_t>());
  torch::Tensor outputs = torch::empty(shape, torch::kFloat32);
  if (outputs.numel() == 0) return outputs;
  std::vector<torch::Tensor> data{outputs};
  gang.process_group().recv(data, from, kValidationTag + 1)->wait();
  return outputs;
}

// The validation split over the gang: rank r evaluates rows [r n / k,
// (r + 1) n / k) and sends its model outputs to rank 0, which computes the
// loss and metrics over all of them in row order, as evaluate_model does over
// the whole set (the metrics need the outputs, not sums of them). Rank 0
// returns the evaluation, the others nothing. Every rank must call it.
std::optional<Evaluation> evaluate_split(GangSession::Impl& gang, Model& model, const ShapeInfo& shape,
                                         const datasets::Dataset& data) {
  // Captioning's BLEU decodes captions step by step from the model: rank 0 scores the whole set alone.
  if (shape.task == datasets::TaskKind::captioning)
    return gang.rank == 0 ? std::optional<Evaluation>(evaluate_model(model, shape, data)) : std::nullopt;
  torch::NoGradGuard no_grad;
  model.set_training(false);
  const int64_t n = data.size(), k = gang.size;
  auto first_row = [&](int64_t rank) { return rank * n / k; };
  auto x = features_of(data);
  std::vector<torch::Tensor> batches;
  for (int64_t b = first_row(gang.rank), end = first_row(gang.rank + 1); b < end; b += kEvaluationBatch)
    batches.push_back(model.forward(x.slice(0, b, std::min(b + kEvaluationBatch, end))).to(torch::kFloat32));
  torch::Tensor own = batches.empty() ? torch::empty({0}, torch::kFloat32) : torch::cat(batches).contiguous();
  if (gang.rank != 0) {
    send_outputs(gang, std::move(own));
    return std::nullopt;
  }
  const Objective objective(shape, model);
  MetricAccumulator metrics(shape, model.template_metrics());
  auto y = task_targets(data, shape, 0);
  double loss_sum = 0;
  for (int rank = 0; rank < k; ++rank) {
    torch::Tensor outputs = rank == 0 ? own : receive_outputs(gang, rank);
    const int64_t begin = first_row(rank), end = first_row(rank + 1);
    if (end == begin) continue;
    if (outputs.dim() == 0 || outputs.size(0) != end - begin)
      throw Error(fmt::format("rank {} sent outputs for {} rows, not {}", rank, outputs.dim() ? outputs.size(0) : 0,
                              end - begin));
    auto yb = y.slice(0, begin, end);
    loss_sum += objective.summed_loss(outputs, yb);
    metrics.add(outputs, yb);
  }
  Evaluation e;
  e.examples = n;
  if (n) e.loss = loss_sum / static_cast<double>(n);
  e.metrics = metrics.result(&e.accuracy);
  return e;
}

}  // namespace

Result<GangUnitOutput> train_gang_unit(GangSession& session, const UnitInput& in) {
  GangSession::Impl& gang = session.impl();
  return guarded<GangUnitOutput>(
      fmt::format("gang training failed (rank {} of {})", gang.rank, gang.size),
      [&] {
        const BlockCacheScope buffers_stay_on_this_thread;
        const ComputingThread computing;
        const FlushDenormalsScope no_denormals;
        GangUnitOutput out;
        auto t0 = Clock::now();
        Trainee t = build(*in.params, in.shape);
        restore_state(t, *in.state);
        out.unit.restore_s = since(t0);

        auto t1 = Clock::now();
        const int64_t k = gang.size;
        // Checked on every rank alike, before any communication: all fail together.
        if (t.training.batch_size < k) {
          throw Error(fmt::format("batch_size {} is smaller than the gang's {} ranks", t.training.batch_size, k),
                      StatusCode::invalid_argument);
        }
        const int64_t share = t.training.batch_size / k + (gang.rank < t.training.batch_size % k ? 1 : 0);
        auto generator = at::make_generator<at::CPUGeneratorImpl>(in.seed);
        t.model->set_generator(generator);
        t.model->set_training(true);
        const datasets::Dataset& data = *in.partition;
        auto x = features_of(data);
        auto y = task_targets(data, in.shape, in.seed);
        const Objective objective(in.shape, *t.model);
        auto order = torch::randperm(data.size(), generator, torch::kInt64);
        // Every rank takes as many steps as the rank with the most.
        auto steps_tensor = torch::tensor({static_cast<double>((data.size() + share - 1) / share)}, torch::kFloat64);
        gang.allreduce(steps_tensor, c10d::ReduceOp::MAX);
        const auto steps = static_cast<int64_t>(steps_tensor.item<double>());

        std::vector<torch::Tensor> params = t.model->parameters();
        // Declared after the model, destroyed before it: its hooks point here.
        FlatGradients gradients(gang, params);
        const int64_t numel = gradients.numel();
        torch::Tensor& buffer = gradients.flat();
        const auto& faults = FaultInjection::instance();
        double loss_sum = 0;
        int64_t examples = 0;
        for (int64_t step = 0; step < steps; ++step) {
          // A test's rank that dies or hangs mid-attempt.
          if (auto thrown = faults.crash_point("gang_step"); !thrown.ok()) throw Error(thrown);
          int64_t begin = step * share;
          int64_t end = std::min(begin + share, data.size());
          gradients.begin_step();
          if (begin < end) {
            auto idx = order.slice(0, begin, end);
            // The task's (or the template's) loss, summed over this rank's share.
            auto yb = y.index_select(0, idx);
            auto loss =
                objective.summed_loss_tensor(t.model->forward(task_input(in.shape, x.index_select(0, idx), yb)), yb);
            gradients.set_counts(static_cast<double>(end - begin), loss.item<double>());
            loss.backward();  // starts the buckets' allreduces as they fill
            out.rank_examples += end - begin;
          }
          // What the sums cost beyond backward: the buckets still open and
          // waiting for all of them (and for the slower rank).
          auto a0 = Clock::now();
          gradients.flush();
          gradients.wait();
          out.allreduce_s += since(a0);
          double global_examples = buffer[numel].item<double>();
          double global_loss = buffer[numel + 1].item<double>();
          if (!std::isfinite(global_loss)) {
            out.unit.diverged = true;  // every rank sees the same sum: all stop here
            break;
          }
          buffer.slice(0, 0, numel).div_(global_examples);
          t.optimizer->step();
          loss_sum += global_loss;
          examples += static_cast<int64_t>(global_examples);
          ++out.steps;
        }
        // One state: average the buffers (BatchNorm statistics) each rank kept from its own batches.
        {
          torch::NoGradGuard no_grad;
          std::vector<const void*> parameter_data;
          for (const auto& p : params) parameter_data.push_back(p.data_ptr());
          for (auto& [name, tensor] : t.model->named_state()) {
            bool is_parameter =
                std::find(parameter_data.begin(), parameter_data.end(), tensor.data_ptr()) != parameter_data.end();
            if (is_parameter || !tensor.is_floating_point()) continue;
            auto sum = tensor.clone();
            gang.allreduce(sum);
            tensor.copy_(sum / static_cast<double>(k));
          }
        }
        out.unit.train_s = since(t1);
        out.unit.train_loss = examples ? loss_sum / static_cast<double>(examples) : 0;
        out.unit.examples = examples;
        // Validation: split over the ranks when every rank was given it (the
        // scheduler gives it to all of a gang that ends an epoch), else by each
        // rank that was, over the whole set. All ranks agree on `diverged`.
        if (!out.unit.diverged) {
          auto t2 = Clock::now();
          torch::Tensor given = torch::tensor({in.validation ? 1.0f : 0.0f});
          GangSum count(gang, kValidationTag + 2, 1);
          count.start(given);
          count.finish();
          if (given.item<float>() == static_cast<float>(k)) {
            if (auto e = evaluate_split(gang, *t.model, in.shape, *in.validation)) out.unit.validation = std::move(*e);
            out.unit.validate_s = since(t2);
          } else if (in.validation) {
            out.unit.validation = evaluate_model(*t.model, in.shape, *in.validation);
            out.unit.validate_s = since(t2);
          }
        }
        auto t3 = Clock::now();
        out.unit.state = save_state(t);
        out.unit.save_s = since(t3);
        return out;
      },
      StatusCode::unavailable);  // a peer that died or hung: the attempt runs again
}

Result<double> measure_allreduce(GangSession& session, const nlohmann::json& params, const ShapeInfo& shape,
                                 int repeats) {
  GangSession::Impl& gang = session.impl();
  return guarded<double>(
      "allreduce probe failed",
      [&] {
        const ComputingThread computing;  // as a training rank would be
        Trainee t = build(params, shape);
        int64_t numel = 2;
        for (const auto& p : t.model->parameters()) numel += p.numel();
        torch::Tensor buffer = torch::ones({numel}, torch::kFloat32);
        GangSum sum(gang, 0, numel);  // the way a step sums gradients of this size
        auto sum_once = [&] {
          sum.start(buffer);
          sum.finish();
        };
        sum_once();  // forms the process group: not timed
        auto start = Clock::now();
        for (int i = 0; i < std::max(1, repeats); ++i) sum_once();
        return since(start) / std::max(1, repeats);
      },
      StatusCode::unavailable);  // a peer that died or hung
}

Result<double> measure_allreduce_local(const nlohmann::json& params, const ShapeInfo& shape, int ranks, int repeats) {
  if (ranks < 2) return Status::invalid_argument(fmt::format("an allreduce needs at least 2 ranks, got {}", ranks));
  auto gang = local_gang(ranks, 30);
  if (!gang.ok()) return gang.status();
  std::vector<std::unique_ptr<GangSession>>& sessions = *gang;
  std::vector<Result<double>> results(static_cast<size_t>(ranks), Status::internal("not run"));
  std::vector<std::thread> threads;
  for (int rank = 1; rank < ranks; ++rank)
    threads.emplace_back([&, rank] { results[rank] = measure_allreduce(*sessions[rank], params, shape, repeats); });
  results[0] = measure_allreduce(*sessions[0], params, shape, repeats);
  for (auto& t : threads) t.join();
  for (const auto& r : results)
    if (!r.ok()) return r.status();
  return results[0];
}

}  // namespace cerebro::models
