#pragma once
// Torch-free: a worker's built models, kept between its units.
// Building a config's model and optimizer (reading its hyper-parameters,
// allocating and randomly initialising every layer, only for the restore to
// overwrite it) is part of every unit's fixed cost; a worker that trains the
// same config again restores the state into the model it built before.
//
// A reused model gives the same results bit for bit as a fresh build: the
// restore overwrites every tensor of the model's state, replaces the
// optimizer's state entirely, and clears the gradients (a fresh model has
// none); the training pass sets the generator and the training mode itself.
// Only the built-in zoo models are reused: a registered or TorchScript model
// may keep state outside its named tensors that a fresh build would reset.

#include <cstdint>
#include <memory>

#include "models/unit_trainer.hpp"

namespace cerebro::models {

class TraineeCache {
 public:
  // Keeps models whose state (parameters and buffers) takes at most
  // `max_state_bytes` in all (the least recently used go first).
  explicit TraineeCache(int64_t max_state_bytes = int64_t{64} << 20);
  ~TraineeCache();
  TraineeCache(const TraineeCache&) = delete;
  TraineeCache& operator=(const TraineeCache&) = delete;

  int64_t builds() const;  // units that built their model
  int64_t reuses() const;  // units that reused one
  size_t size() const;     // models kept

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// train_unit (models/unit_trainer.hpp) with the worker's kept models: the
// same result, bit for bit.
Result<UnitOutput> train_unit(const UnitInput& input, TraineeCache& cache);

// Whether `model` names a built-in zoo model (not one registered by a user,
// not a TorchScript file).
bool is_builtin_model(const std::string& model);

}  // namespace cerebro::models
