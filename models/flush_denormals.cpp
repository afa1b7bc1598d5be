// FlushDenormalsScope (models/flush_denormals.hpp).
#include "models/flush_denormals.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define CEREBRO_HAS_MXCSR 1
#endif

namespace cerebro::models {

#ifdef CEREBRO_HAS_MXCSR
namespace {
constexpr unsigned kFlushToZero = 0x8000;       // FTZ: denormal results become zero
constexpr unsigned kDenormalsAreZero = 0x0040;  // DAZ: denormal inputs read as zero
}  // namespace

FlushDenormalsScope::FlushDenormalsScope() : saved_(_mm_getcsr()) {
  _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
}
FlushDenormalsScope::~FlushDenormalsScope() { _mm_setcsr(saved_); }
bool FlushDenormalsScope::active() {
  return (_mm_getcsr() & (kFlushToZero | kDenormalsAreZero)) == (kFlushToZero | kDenormalsAreZero);
}
#else
FlushDenormalsScope::FlushDenormalsScope() = default;
FlushDenormalsScope::~FlushDenormalsScope() = default;
bool FlushDenormalsScope::active() { return false; }
#endif

}  // namespace cerebro::models
