#pragma once
// The threads of this process that compute now: units trained alone,
// pipeline stages, gang ranks (training or measuring their sums). A gang
// rank spins while it waits for its peers only while these fit the cores
// (waiting_may_spin, models/gang_trainer.hpp).

namespace cerebro::models {

// While an object lives, its thread is one of the computing threads.
class ComputingThread {
 public:
  ComputingThread();
  ~ComputingThread();
  ComputingThread(const ComputingThread&) = delete;
  ComputingThread& operator=(const ComputingThread&) = delete;

  // How many there are now, in the whole process.
  static int count();
};

}  // namespace cerebro::models
