#pragma once
// LibTorch's CPU allocator for training: while a thread trains a unit, the
// large buffers it frees (activations, gradients: a cnn step's are 1 to 26
// MB) are kept for that same thread's next allocation of the same size.
//
// Why (docs/BENCHMARKS.md "The training path"): a process-wide malloc
// (tcmalloc's page heap, glibc's one arena) hands a buffer one worker thread
// freed to the other worker's next allocation, so its cache lines move from
// one core to the other every step. Two cnn units trained as two threads of
// one process took 7 to 30 % longer than the same units as two processes
// (CPU time equal to wall time: no waiting, slower execution); with this cache
// the threads matched the processes. That was the embedded cluster's premium
// over agent processes.
//
// Memory: a scope keeps at most kMaxCachedBytes, and everything it kept is
// freed when it ends, so a thread holds no more than its unit's peak.

#include <cstddef>

namespace cerebro::models {

// Blocks smaller than this go straight to malloc (whose per-thread caches
// already serve small sizes from the freeing thread).
inline constexpr size_t kMinCachedBlock = 64 * 1024;
inline constexpr size_t kMaxCachedBytes = size_t{512} << 20;

// Makes this allocator LibTorch's CPU allocator. Outside a BlockCacheScope
// it allocates and frees like LibTorch's default one (64-byte aligned
// malloc). Idempotent; configure_allocator calls it.
void install_block_cache_allocator();

// While alive, this thread's freed blocks of at least kMinCachedBlock bytes
// that it allocated itself are kept for its own next allocations of the same
// size (rounded up to 4 KiB). A block freed by another thread, or after the
// scope, goes back to malloc. Nested scopes share the outermost one.
class BlockCacheScope {
 public:
  BlockCacheScope();
  ~BlockCacheScope();
  BlockCacheScope(const BlockCacheScope&) = delete;
  BlockCacheScope& operator=(const BlockCacheScope&) = delete;

  // Bytes this thread's scope keeps now (0 outside a scope).
  static size_t cached_bytes();

 private:
  bool outermost_ = false;
};

}  // namespace cerebro::models
