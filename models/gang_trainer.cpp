// Data-parallel gang training over c10d ProcessGroupGloo (see gang_trainer.hpp).
// USE_C10D_GLOO is defined for the models target (models/CMakeLists.txt):
// Debian's TorchConfig does not set it, and ProcessGroupGloo.hpp is empty without it.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "models/gang_trainer.hpp"
#include "models/task.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

using namespace detail;

struct GangSession::Impl {
  int rank = 0;
  int size = 0;
  std::string own_address;
  std::chrono::milliseconds timeout{30000};
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;  // made on first use: every rank must be there

  c10d::ProcessGroupGloo& process_group() {
    if (!group) {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(own_address));
      options->threads = 1;
      group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
    }
    return *group;
  }
  // Sums (or maxes) `t` over the gang in place.
  void allreduce(torch::Tensor& t, c10d::ReduceOp op = c10d::ReduceOp::SUM) {
    std::vector<torch::Tensor> tensors{t};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
    process_group().allreduce(tensors, options)->wait();
  }
};

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.001, seconds) * 1000));
}

}  // namespace

GangSession::GangSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GangSession::~GangSession() = default;
int GangSession::rank() const { return impl_->rank; }
int GangSession::size() const { return impl_->size; }
int GangSession::port() const { return impl_->store ? impl_->store->getPort() : 0; }

Result<std::unique_ptr<GangSession>> GangSession::host(const std::string& address, int size, double timeout_s) {
  if (size < 2) return Status::error(fmt::format("a gang needs at least 2 ranks, got {}", size));
  return guarded<std::unique_ptr<GangSession>>("gang rendezvous (rank 0)", [&] {
    auto impl = std::make_unique<Impl>();
    impl->rank = 0;
    impl->size = size;
    impl->own_address = address;
    impl->timeout = to_ms(timeout_s);
    c10d::TCPStoreOptions options;
    options.port = 0;  // a free port, reported through the coordinator
    options.isServer = true;
    options.numWorkers = static_cast<size_t>(size);
    options.waitWorkers = false;  // the others join after they learn the port
    options.timeout = impl->timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(address, options);
    return std::unique_ptr<GangSession>(new GangSession(std::move(impl)));
  });
}

Result<std::unique_ptr<GangSession>> GangSession::join(const std::string& store_address, int port,
                                                       const std::string& own_address, int rank, int size,
                                                       double timeout_s) {
  if (size < 2 || rank < 1 || rank >= size) {
    return Status::error(fmt::format("gang rank {} outside 1..{} (rank 0 hosts)", rank, size - 1));
  }
  if (port < 1 || port > 65535) return Status::error(fmt::format("gang store port {} outside 1..65535", port));
  return guarded<std::unique_ptr<GangSession>>(fmt::format("gang rendezvous (rank {})", rank), [&] {
    auto impl = std::make_unique<Impl>();
    impl->rank = rank;
    impl->size = size;
    impl->own_address = own_address;
    impl->timeout = to_ms(timeout_s);
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(port);
    options.isServer = false;
    options.numWorkers = static_cast<size_t>(size);
    options.waitWorkers = false;
    options.timeout = impl->timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(store_address, options);
    return std::unique_ptr<GangSession>(new GangSession(std::move(impl)));
  });
}

Result<GangUnitOutput> train_gang_unit(GangSession& session, const UnitInput& in) {
  GangSession::Impl& gang = session.impl();
  return guarded<GangUnitOutput>(fmt::format("gang training failed (rank {} of {})", gang.rank, gang.size), [&] {
    GangUnitOutput out;
    auto t0 = Clock::now();
    Trainee t = build(*in.params, in.shape);
    restore_state(t, *in.state);
    out.unit.restore_s = since(t0);

    auto t1 = Clock::now();
    const int64_t k = gang.size;
    // Checked on every rank alike, before any communication: all fail together.
    if (t.training.batch_size < k) {
      throw Error(fmt::format("batch_size {} is smaller than the gang's {} ranks", t.training.batch_size, k));
    }
    const int64_t share = t.training.batch_size / k + (gang.rank < t.training.batch_size % k ? 1 : 0);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(in.seed);
    t.model->set_generator(generator);
    t.model->set_training(true);
    const datasets::Dataset& data = *in.partition;
    auto x = features_of(data);
    auto y = targets_of(data);
    const Objective objective(in.shape, *t.model);
    auto order = torch::randperm(data.size(), generator, torch::kInt64);
    // Every rank takes as many steps as the rank with the most.
    auto steps_tensor = torch::tensor({static_cast<double>((data.size() + share - 1) / share)}, torch::kFloat64);
    gang.allreduce(steps_tensor, c10d::ReduceOp::MAX);
    const auto steps = static_cast<int64_t>(steps_tensor.item<double>());

    std::vector<torch::Tensor> params = t.model->parameters();
    int64_t numel = 0;
    for (const auto& p : params) numel += p.numel();
    double loss_sum = 0;
    int64_t examples = 0;
    for (int64_t step = 0; step < steps; ++step) {
      int64_t begin = step * share;
      int64_t end = std::min(begin + share, data.size());
      t.optimizer->zero_grad();
      // [gradients of the summed loss ..., examples, summed loss]
      torch::Tensor buffer = torch::zeros({numel + 2}, torch::kFloat32);
      if (begin < end) {
        auto idx = order.slice(0, begin, end);
        // The task's (or the template's) loss, summed over this rank's share.
        auto loss = objective.summed_loss_tensor(t.model->forward(x.index_select(0, idx)), y.index_select(0, idx));
        loss.backward();
        int64_t offset = 0;
        for (const auto& p : params) {
          if (p.grad().defined()) buffer.slice(0, offset, offset + p.numel()).copy_(p.grad().reshape({-1}));
          offset += p.numel();
        }
        buffer[numel] = static_cast<float>(end - begin);
        buffer[numel + 1] = loss.item<float>();
      }
      auto a0 = Clock::now();
      gang.allreduce(buffer);
      out.allreduce_s += since(a0);
      double global_examples = buffer[numel].item<double>();
      double global_loss = buffer[numel + 1].item<double>();
      if (!std::isfinite(global_loss)) {
        out.unit.diverged = true;  // every rank sees the same sum: all stop here
        break;
      }
      buffer.slice(0, 0, numel).div_(global_examples);
      int64_t offset = 0;
      for (auto& p : params) {
        auto grad = buffer.slice(0, offset, offset + p.numel()).view_as(p);
        if (p.grad().defined()) {
          p.mutable_grad().copy_(grad);
        } else {
          p.mutable_grad() = grad.clone();
        }
        offset += p.numel();
      }
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
        bool is_parameter = std::find(parameter_data.begin(), parameter_data.end(), tensor.data_ptr()) !=
                            parameter_data.end();
        if (is_parameter || !tensor.is_floating_point()) continue;
        auto sum = tensor.clone();
        gang.allreduce(sum);
        tensor.copy_(sum / static_cast<double>(k));
      }
    }
    out.unit.train_s = since(t1);
    out.unit.train_loss = examples ? loss_sum / static_cast<double>(examples) : 0;
    out.unit.examples = examples;
    if (in.validation && !out.unit.diverged) {
      auto t2 = Clock::now();
      out.unit.validation = evaluate_model(*t.model, in.shape, *in.validation);
      out.unit.validate_s = since(t2);
    }
    auto t3 = Clock::now();
    out.unit.state = save_state(t);
    out.unit.save_s = since(t3);
    return out;
  });
}

Result<double> measure_allreduce(GangSession& session, const nlohmann::json& params, const ShapeInfo& shape,
                                 int repeats) {
  GangSession::Impl& gang = session.impl();
  return guarded<double>("allreduce probe failed", [&] {
    Trainee t = build(params, shape);
    int64_t numel = 2;
    for (const auto& p : t.model->parameters()) numel += p.numel();
    torch::Tensor buffer = torch::ones({numel}, torch::kFloat32);
    gang.allreduce(buffer);  // forms the process group: not timed
    auto start = Clock::now();
    for (int i = 0; i < std::max(1, repeats); ++i) gang.allreduce(buffer);
    return since(start) / std::max(1, repeats);
  });
}

}  // namespace cerebro::models
