#include "models/thread_block_cache.hpp"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <unordered_map>
#include <vector>

namespace cerebro::models {
namespace {

// Every block starts with this header, padded to LibTorch's alignment, so
// the deleter (a plain function: oneDNN frees through raw_deleter) finds the
// block's size and the cache that may keep it.
struct BlockHeader {
  uint64_t scope;  // the id of the scope that allocated it; 0: not cacheable
  size_t size;     // rounded size, without the header
};
constexpr size_t kAlignment = 64;
constexpr size_t kHeaderBytes = 64;
static_assert(sizeof(BlockHeader) <= kHeaderBytes);

// Scope ids are unique in the process (an address could be reused by a later
// scope, or another thread's).
std::atomic<uint64_t> last_scope_id{0};

struct ThreadCache {
  const uint64_t id = ++last_scope_id;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;  // by size: block starts (headers)
  size_t bytes = 0;
  ~ThreadCache() {
    for (auto& [size, blocks] : free_blocks)
      for (void* block : blocks) std::free(block);
  }
};

// This thread's cache while a scope is alive, else null.
thread_local ThreadCache* current_cache = nullptr;

size_t rounded(size_t n) { return (n + 4095) & ~size_t{4095}; }

void release(void* data) {
  if (!data) return;
  void* block = static_cast<char*>(data) - kHeaderBytes;
  const auto* header = static_cast<const BlockHeader*>(block);
  ThreadCache* cache = current_cache;
  if (cache && header->scope == cache->id && cache->bytes + header->size <= kMaxCachedBytes) {
    cache->free_blocks[header->size].push_back(block);
    cache->bytes += header->size;
    return;
  }
  std::free(block);
}

void* allocate_block(size_t size) {
  void* block = nullptr;
  if (posix_memalign(&block, kAlignment, kHeaderBytes + size) != 0) throw std::bad_alloc();
  return block;
}

class BlockCacheAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    ThreadCache* cache = current_cache;
    void* block = nullptr;
    BlockHeader header{0, n};
    if (cache && n >= kMinCachedBlock) {
      header = {cache->id, rounded(n)};
      auto it = cache->free_blocks.find(header.size);
      if (it != cache->free_blocks.end() && !it->second.empty()) {
        block = it->second.back();
        it->second.pop_back();
        cache->bytes -= header.size;
      }
    }
    if (!block) block = allocate_block(header.size);
    *static_cast<BlockHeader*>(block) = header;
    void* data = static_cast<char*>(block) + kHeaderBytes;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

void install_block_cache_allocator() {
  static BlockCacheAllocator allocator;
  // Above the default's priority (0), so LibTorch's own registration at
  // load time cannot take it back.
  c10::SetCPUAllocator(&allocator, 1);
}

BlockCacheScope::BlockCacheScope() {
  if (current_cache) return;
  current_cache = new ThreadCache();
  outermost_ = true;
}

BlockCacheScope::~BlockCacheScope() {
  if (!outermost_) return;
  ThreadCache* cache = current_cache;
  current_cache = nullptr;  // before freeing: a block freed from here on goes to malloc
  delete cache;
}

size_t BlockCacheScope::cached_bytes() { return current_cache ? current_cache->bytes : 0; }

}  // namespace cerebro::models
