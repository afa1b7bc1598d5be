// max_pool2x2 (models/max_pool.hpp): an autograd function around
// models/pool_kernel.hpp's loops.
#include "models/max_pool.hpp"

#include <ATen/Parallel.h>

#include "models/pool_kernel.hpp"

namespace cerebro::models {

namespace {

// Planes a thread of an intra-op parallel pool takes at least (a worker with
// threads_per_worker > 1 splits a large batch).
constexpr int64_t kGrainPlanes = 16;

struct PoolShape {
  int64_t planes, height, width;
};

PoolShape shape_of(torch::IntArrayRef sizes) {
  const auto dims = sizes.size();
  const int64_t height = sizes[dims - 2], width = sizes[dims - 1];
  int64_t planes = 1;
  for (size_t d = 0; d + 2 < dims; ++d) planes *= sizes[d];
  return {planes, height, width};
}

std::vector<int64_t> pooled_sizes(torch::IntArrayRef sizes) {
  auto out = sizes.vec();
  out[out.size() - 2] /= 2;
  out[out.size() - 1] /= 2;
  return out;
}

bool loops_take(const torch::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && (x.dim() == 3 || x.dim() == 4) &&
         x.size(-2) >= 2 && x.size(-1) >= 2 && !x.is_sparse();
}

// The planes [begin, end) of a pool, each run by `run(first plane, count)`.
template <class Run>
void over_planes(int64_t planes, Run run) {
  at::parallel_for(0, planes, kGrainPlanes, [&](int64_t begin, int64_t end) { run(begin, end - begin); });
}

class MaxPool2x2 : public torch::autograd::Function<MaxPool2x2> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    const auto in = x.contiguous();
    const auto s = shape_of(in.sizes());
    const auto out_sizes = pooled_sizes(in.sizes());
    auto out = torch::empty(out_sizes, in.options());
    auto where = torch::empty(out_sizes, in.options().dtype(torch::kUInt8));
    const int64_t in_plane = s.height * s.width, out_plane = (s.height / 2) * (s.width / 2);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    uint8_t* places = where.data_ptr<uint8_t>();
    over_planes(s.planes, [&](int64_t first, int64_t count) {
      max_pool2x2_forward(src + first * in_plane, count, s.height, s.width, dst + first * out_plane,
                          places + first * out_plane);
    });
    ctx->save_for_backward({where});
    ctx->saved_data["sizes"] = in.sizes().vec();
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto where = ctx->get_saved_variables()[0];
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    const auto grad_out = grads[0].contiguous();
    const auto s = shape_of(sizes);
    auto grad_in = torch::empty(sizes, grad_out.options());
    const int64_t in_plane = s.height * s.width, out_plane = (s.height / 2) * (s.width / 2);
    const float* g = grad_out.data_ptr<float>();
    const uint8_t* places = where.data_ptr<uint8_t>();
    float* dst = grad_in.data_ptr<float>();
    over_planes(s.planes, [&](int64_t first, int64_t count) {
      max_pool2x2_backward(g + first * out_plane, places + first * out_plane, count, s.height, s.width,
                           dst + first * in_plane);
    });
    return {grad_in};
  }
};

}  // namespace

torch::Tensor max_pool2x2(const torch::Tensor& x) {
  if (!loops_take(x)) return torch::max_pool2d(x, 2);
  if (torch::GradMode::is_enabled() && x.requires_grad()) return MaxPool2x2::apply(x);
  const auto in = x.contiguous();
  const auto s = shape_of(in.sizes());
  auto out = torch::empty(pooled_sizes(in.sizes()), in.options());
  const int64_t in_plane = s.height * s.width, out_plane = (s.height / 2) * (s.width / 2);
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  over_planes(s.planes, [&](int64_t first, int64_t count) {
    max_pool2x2_values(src + first * in_plane, count, s.height, s.width, dst + first * out_plane);
  });
  return out;
}

}  // namespace cerebro::models
