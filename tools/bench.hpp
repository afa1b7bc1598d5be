#pragma once
// `cerebro bench`: the reference workload (grid {mlp, cnn} x lr {1e-3, 3e-4} x
// batch {64, 256}, Adam, 2 epochs, Fashion-MNIST, 2 workers x 1 thread) on the
// embedded cluster, against the ideal measured in the same invocation: each
// config trained by a plain LibTorch loop on one thread over the same data
// (with the same per-epoch validation), summed, divided by the workers; and
// the same standalone loops run `workers` at a time (what this machine gives
// concurrent trainings). With --cluster: the same workload on a coordinator
// and agent processes against the embedded run, hop latency of a 10 MB state
// over loopback, and the bytes of model state moved per epoch.

#include <cstdint>
#include <string>

namespace cerebro {

struct BenchOptions {
  std::string out_dir;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int64_t limit = 0;
  int epochs = 2;
  int workers = 2;
  std::string json_path;
  bool cluster = false;  // also run it on a coordinator + `workers` agent processes
};

int run_bench(const BenchOptions& options);

}  // namespace cerebro
