#pragma once
// GangSession's insides, shared by models/gang_session.cpp (rendezvous,
// sessions) and models/gang_trainer.cpp (training over them). Includes c10d:
// only those two translation units include it.
// USE_C10D_GLOO is defined for the models target (models/CMakeLists.txt):
// Debian's TorchConfig does not set it, and ProcessGroupGloo.hpp is empty without it.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <chrono>
#include <string>

#include "models/gang_trainer.hpp"

namespace cerebro::models {

struct GangSession::Impl {
  int rank = 0;
  int size = 0;
  std::string own_address;
  std::chrono::milliseconds timeout{30000};
  c10::intrusive_ptr<c10d::Store> store;
  int tcp_port = 0;  // host()/join(): the TCPStore's
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

}  // namespace cerebro::models
