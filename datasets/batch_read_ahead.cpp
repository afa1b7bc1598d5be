#include "datasets/batch_read_ahead.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"

namespace cerebro::datasets {

// Batch buffers, recycled: a buffer comes back when the last holder of its batch lets go (a tensor may
// hold it after the reader is gone, hence shared). Anonymous mappings rather than malloc: batches are
// allocated on the reader's thread and freed on the trainer's, a pattern that made glibc's arenas keep tens
// of MB of freed batches resident (measured: 35 MB more anonymous memory than the batches in use); a
// mapping's pages go back to the system when it is unmapped. Page-aligned, so aligned at least as LibTorch's
// own allocations are.
class BatchReadAhead::BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  BufferPool(size_t bytes, size_t keep) : bytes_(std::max<size_t>(bytes, 1)), keep_(keep) {}
  ~BufferPool() {
    for (void* p : free_) ::munmap(p, bytes_);
  }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Null when no buffer can be mapped (errno says why).
  std::shared_ptr<float> take() {
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        p = free_.back();
        free_.pop_back();
      }
    }
    if (!p) {
      p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
    }
    return std::shared_ptr<float>(static_cast<float*>(p),
                                  [pool = shared_from_this()](float* q) { pool->give_back(q); });
  }

 private:
  void give_back(float* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < keep_) {
      free_.push_back(p);
    } else {
      ::munmap(p, bytes_);
    }
  }

  const size_t bytes_, keep_;
  std::mutex mutex_;
  std::vector<void*> free_;  // guarded by mutex_
};

namespace {
std::atomic<int64_t> started_readers{0};
}  // namespace

int64_t BatchReadAhead::readers_started() { return started_readers.load(std::memory_order_relaxed); }

BatchReadAhead::BatchReadAhead(const Dataset& data, const int64_t* order, int64_t count, int64_t batch_size,
                               ReadAheadLimits limits)
    : data_(data),
      order_(order),
      count_(std::max<int64_t>(0, count)),
      batch_size_(batch_size),
      batches_(batch_size > 0 ? (count_ + batch_size - 1) / batch_size : 0),
      row_floats_(static_cast<size_t>(data.sample_numel())),
      limits_(limits),
      // Enough to recycle every buffer in flight: the waiting batches, the one being gathered, the trainer's.
      pool_(std::make_shared<BufferPool>(
          static_cast<size_t>(batch_size > 0 ? batch_size : 1) * row_floats_ * sizeof(float),
          static_cast<size_t>(std::max(limits.depth, 1)) + 2)) {
  if (batch_size < 1) contract_violation("BatchReadAhead", fmt::format("batch size {} < 1", batch_size));
  for (int64_t i = 0; i < count_; ++i) {
    if (order[i] < 0 || order[i] >= data.size()) {
      contract_violation("BatchReadAhead",
                         fmt::format("index {} is outside a dataset of {} examples", order[i], data.size()));
    }
  }
  started_readers.fetch_add(1, std::memory_order_relaxed);
  reader_ = std::thread([this] { read_all(); });
}

BatchReadAhead::~BatchReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  reader_.join();
}

int64_t BatchReadAhead::batch_bytes(int64_t b) const {
  const int64_t rows = std::min(batch_size_, count_ - b * batch_size_);
  return rows * static_cast<int64_t>(row_floats_ * sizeof(float));
}

Result<GatheredBatch> BatchReadAhead::gather_batch(int64_t b) const {
  GatheredBatch batch;
  batch.begin = b * batch_size_;
  batch.rows = std::min(batch_size_, count_ - batch.begin);
  batch.features = pool_->take();
  if (!batch.features) {
    // Memory the system may give back in a moment: the unit fails and runs again.
    return Status::unavailable(
        fmt::format("read-ahead: cannot map {} bytes for a batch: {}", batch_bytes(b), std::strerror(errno)));
  }
  const float* from = data_.feature_data();
  float* to = batch.features.get();
  const size_t row_bytes = row_floats_ * sizeof(float);
  for (int64_t r = 0; r < batch.rows; ++r) {
    const auto src = static_cast<size_t>(order_[batch.begin + r]);
    std::memcpy(to + static_cast<size_t>(r) * row_floats_, from + src * row_floats_, row_bytes);
  }
  return batch;
}

// Asks the kernel to start reading the pages of batch b's rows (asynchronously; pages already in the page
// cache cost a lookup). Adjacent and overlapping page ranges are merged into one request.
void BatchReadAhead::advise(int64_t b) const {
  if (!data_.is_mapped() || b >= batches_ || row_floats_ == 0) return;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(data_.feature_data());
  const uintptr_t row_bytes = row_floats_ * sizeof(float);
  const int64_t begin = b * batch_size_, end = std::min(count_, begin + batch_size_);
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  ranges.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    const uintptr_t first = base + static_cast<uintptr_t>(order_[i]) * row_bytes;
    ranges.emplace_back(first & ~(page - 1), (first + row_bytes + page - 1) & ~(page - 1));
  }
  std::sort(ranges.begin(), ranges.end());
  auto request = [](uintptr_t from, uintptr_t to) {
    // Advice only: a failure (e.g. a kernel without it) leaves the reads to the page faults.
    (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_WILLNEED);
  };
  uintptr_t from = ranges.front().first, to = ranges.front().second;
  for (const auto& [first, last] : ranges) {
    if (first > to) {
      request(from, to);
      from = first;
    }
    to = std::max(to, last);
  }
  request(from, to);
}

void BatchReadAhead::read_all() {
  Status failed;
  // The standard containers here throw std::bad_alloc when memory runs out.
  try {
    for (int64_t b = 0; b < limits_.advise_ahead && b < batches_; ++b) advise(b);
    for (int64_t b = 0; b < batches_; ++b) {
      const int64_t bytes = batch_bytes(b);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          return stop_ || ready_.empty() ||
                 (static_cast<int>(ready_.size()) < limits_.depth && ready_bytes_ + bytes <= limits_.max_bytes);
        });
        if (stop_) return;
      }
      advise(b + limits_.advise_ahead);
      auto batch = gather_batch(b);
      if (!batch.ok()) {
        failed = batch.status();
        break;
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_bytes_ += bytes;
        ready_.push_back(std::move(batch).value());
      }
      changed_.notify_all();
    }
  } catch (const std::bad_alloc&) {
    failed = Status::unavailable("read-ahead: out of memory");
  }
  if (failed.ok()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = failed;
  }
  changed_.notify_all();
}

Result<GatheredBatch> BatchReadAhead::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || handed_out_ == batches_ || !failure_.ok(); });
  if (ready_.empty()) {
    if (!failure_.ok() && handed_out_ < batches_) return failure_;
    return GatheredBatch{};
  }
  GatheredBatch batch = std::move(ready_.front());
  ready_.pop_front();
  ready_bytes_ -= batch_bytes(handed_out_);
  ++handed_out_;
  lock.unlock();
  changed_.notify_all();
  return batch;
}

}  // namespace cerebro::datasets
