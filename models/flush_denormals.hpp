#pragma once
// While alive, this thread treats denormal floats as zero and flushes
// denormal results to zero (x86's MXCSR DAZ and FTZ bits, which are per
// thread); the previous mode comes back when it ends. Elsewhere than x86 it
// does nothing. Training holds one (a unit, a gang rank's unit, each
// pipeline stage's compute), as TensorFlow does by default on CPUs.
//
// Why: Adam's first moment of a parameter whose gradient stays zero for a
// while (the weights of a ReLU unit that does not fire) shrinks by beta1 = 0.9
// a step and reaches the denormal range after about 700 steps, where every
// operation on it takes a microcode assist. Measured on the zoo cnn, batch 64
// as a gang of 2, full Fashion-MNIST (docs/BENCHMARKS.md, "The training path"): from
// about global step 700 on, LibTorch's Adam step took 2.7 ms instead of 1.5
// and the one-pass step (models/fused_adam.hpp) 4.1 ms instead of 0.4, for
// the rest of the run. Flushed, such a moment becomes exactly zero; values
// that small (below 1.2e-38) change no parameter.
namespace cerebro::models {

class FlushDenormalsScope {
 public:
  FlushDenormalsScope();
  ~FlushDenormalsScope();
  FlushDenormalsScope(const FlushDenormalsScope&) = delete;
  FlushDenormalsScope& operator=(const FlushDenormalsScope&) = delete;

  // Whether this thread flushes denormals now (false where unsupported).
  static bool active();

 private:
  unsigned saved_ = 0;
};

}  // namespace cerebro::models
