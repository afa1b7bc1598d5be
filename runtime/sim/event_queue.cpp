#include "runtime/sim/event_queue.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "runtime/base/contract.hpp"

namespace cerebro {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

#if defined(__x86_64__)
// The index (0..7) of the smallest of eight times, and how many share it.
__attribute__((target("avx512f"))) int smallest_of_eight(const double* times, int* ties) {
  __m512d v = _mm512_loadu_pd(times);
  double min = _mm512_reduce_min_pd(v);
  auto equal = static_cast<unsigned>(_mm512_cmp_pd_mask(v, _mm512_set1_pd(min), _CMP_EQ_OQ));
  *ties = __builtin_popcount(equal);
  return __builtin_ctz(equal);
}
#endif

}  // namespace

EventQueue::EventQueue() : times_(kArity + 1, kNever), orders_(kArity + 1, 0) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  avx512_ = __builtin_cpu_supports("avx512f");
#endif
}

void EventQueue::push(double time, uint32_t payload) {
  if (!(time >= 0) || time > std::numeric_limits<double>::max() || payload > kMaxPayload) {
    contract_violation("EventQueue::push", fmt::format("time must be finite and >= 0 and payload <= {}, got {} and {}",
                                                       kMaxPayload, time, payload));
  }
  // Room for this event and a full row of children past the last one.
  if (times_.size() < size_ + 1 + kArity) {
    times_.resize(2 * times_.size(), kNever);
    orders_.resize(times_.size(), 0);
  }
  uint64_t order = (next_seq_++ << kPayloadBits) | payload;
  size_t i = size_++;
  while (i > 0) {
    size_t parent = (i - 1) / kArity;
    if (!(time < times_[parent] || (time == times_[parent] && order < orders_[parent]))) break;
    times_[i] = times_[parent];
    orders_[i] = orders_[parent];
    i = parent;
  }
  times_[i] = time;
  orders_[i] = order;
}

size_t EventQueue::earliest_child(size_t first) const {
#if defined(__x86_64__)
  if (avx512_) {
    int ties = 0;
    size_t best = first + static_cast<size_t>(smallest_of_eight(&times_[first], &ties));
    if (ties == 1) return best;  // else equal times: the order decides, below
  }
#endif
  size_t best = first;
  for (size_t child = first + 1; child < first + kArity; ++child) {
    if (earlier(child, best)) best = child;
  }
  return best;
}

EventQueue::Event EventQueue::pop() {
  Event top{times_[0], static_cast<uint32_t>(orders_[0]) & kMaxPayload};
  size_t last = --size_;
  double last_time = times_[last];
  uint64_t last_order = orders_[last];
  times_[last] = kNever;
  size_t i = 0;
  if (last > 0) {
    for (;;) {
      size_t first = kArity * i + 1;
      if (first >= last) break;
      size_t best = earliest_child(first);
      if (!(times_[best] < last_time || (times_[best] == last_time && orders_[best] < last_order))) break;
      times_[i] = times_[best];
      orders_[i] = orders_[best];
      i = best;
    }
    times_[i] = last_time;
    orders_[i] = last_order;
  }
  return top;
}

}  // namespace cerebro
