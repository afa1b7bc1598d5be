#pragma once
// GangSession's insides, shared by models/gang_session.cpp (rendezvous,
// sessions) and models/gang_trainer.cpp (training over them). Includes c10d:
// only those two translation units include it.
// USE_C10D_GLOO is defined for the models target (models/CMakeLists.txt):
// Debian's TorchConfig does not set it, and ProcessGroupGloo.hpp is empty without it.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <gloo/rendezvous/context.h>

#include <chrono>
#include <string>

#include "models/gang_trainer.hpp"

namespace cerebro::models {

// Gloo's TCP device for `address`, whose event-loop thread (it reads every
// message and writes the sends the caller could not) runs at SCHED_IDLE:
// it takes a core only when no training thread wants it, which is while
// this rank waits for its sums. At normal priority it woke on every message
// and preempted a training thread mid-step, slowing the rank and, through
// the per-step sum, the whole gang. Measured on 2 vCPUs, 2 ranks of the zoo
// cnn, 844 steps, one bucket (allreduce-probe --train 27000, medians of 3
// interleaved rounds): 7.65 s at SCHED_IDLE, 8.44 s at nice 19, 9.98 s at
// normal priority. The cost: on a node whose cores are all busy with other
// work, the gang's messages wait for a free core (docs/CLUSTER.md).
std::shared_ptr<::gloo::transport::Device> idle_priority_device(const std::string& address);

struct GangSession::Impl {
  int rank = 0;
  int size = 0;
  std::string own_address;
  std::chrono::milliseconds timeout{30000};
  c10::intrusive_ptr<c10d::Store> store;
  int tcp_port = 0;  // host()/join(): the TCPStore's
  // Each made on first use (every rank must be there).
  std::shared_ptr<::gloo::transport::Device> device;  // the group's and the exchange's
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::shared_ptr<::gloo::rendezvous::Context> exchange;

  std::shared_ptr<::gloo::transport::Device>& gloo_device() {
    if (!device) device = idle_priority_device(own_address);
    return device;
  }
  c10d::ProcessGroupGloo& process_group() {
    if (!group) {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(gloo_device());
      options->threads = 1;
      group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
    }
    return *group;
  }
  // A second full mesh of Gloo pairs on the same device, for the gradient
  // exchange (models/gang_trainer.cpp, GangSum): its pairs are in Gloo's
  // synchronous mode, so the training thread itself writes and reads them
  // and no event-loop thread stands between a message and its reader. The
  // group's pairs stay asynchronous for c10d's operations.
  ::gloo::Context& exchange_context();
  // Before each exchange: its pairs spin while waiting or sleep in the
  // read, as waiting_may_spin says for this process now.
  void choose_exchange_wait();
  // Sums (or maxes) `t` over the gang in place.
  void allreduce(torch::Tensor& t, c10d::ReduceOp op = c10d::ReduceOp::SUM) {
    std::vector<torch::Tensor> tensors{t};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
    process_group().allreduce(tensors, options)->wait();
  }
};

}  // namespace cerebro::models
