#pragma once
// What pipeline stage actors exchange: a micro-batch's activation,
// the gradient of one, or a micro-batch's targets, as plain bytes. The CAF
// side (inspect, atoms, registration) is runtime/net/pipeline_messages.hpp;
// models/pipeline_runner.hpp turns them into tensors and back.

#include <cstdint>
#include <string>
#include <vector>

namespace cerebro {

struct stage_tensor {
  int64_t micro_batch = 0;     // which micro-batch of the current batch
  bool integer = false;        // int64 elements (class labels) instead of float32
  std::vector<int64_t> shape;  // empty and no data: no tensor (stage 0's input gradient)
  std::string data;            // the elements, contiguous, in this machine's byte order
};

}  // namespace cerebro
