#pragma once
// The LibTorch side of cost priors (runtime/scheduling/cost_prior.hpp): what
// training one example of a config's model costs, timed on a few batches of
// real data when the experiment starts (implemented in trainer.cpp).

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/scheduling/cost_prior.hpp"

namespace cerebro::models {

class TorchCostProbe : public ModelCostProbe {
 public:
  // One warm-up step, then this many timed ones; the fastest counts (a step
  // slowed by another thread or the VM says nothing about the model).
  static constexpr int kTimedSteps = 3;

  // `sample`: examples to train on (a partition; borrowed, must outlive the
  // probe). Steps run in the calling thread, which should have the workers'
  // intra-op thread count (configure_threads).
  TorchCostProbe(ShapeInfo shape, const datasets::Dataset& sample) : shape_(std::move(shape)), sample_(sample) {}
  // Seconds per example of one training step (batch gather, forward, loss,
  // backward, optimizer step) at the config's batch size.
  Result<double> seconds_per_example(const nlohmann::json& params) override;

 private:
  ShapeInfo shape_;
  const datasets::Dataset& sample_;
};

}  // namespace cerebro::models
