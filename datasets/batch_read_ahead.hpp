#pragma once
// Read-ahead of a training pass's batches, for out-of-core partitions (datasets/shard.hpp map_shard): a
// background thread gathers the rows of the next batches, in the pass's order, into batch buffers while
// the trainer computes on the current batch. Page faults, copies and (with a cold page cache) disk reads
// then happen off the training thread; for a memory-mapped Dataset the reader also asks the kernel
// (MADV_WILLNEED) for the pages of the batches after those, so several reads are in flight at once.
//
// The batches are exactly what gather(data, order, begin, end) gives, in the same order: read-ahead
// changes when rows are read, never which rows or in what order, so a replay stays bit-exact.
//
// Memory: at most `depth` gathered batches wait, holding at most `max_bytes` of features together (a
// single batch larger than that is still read, one at a time), plus the one being gathered and the one the
// trainer holds.
// Threads: one consumer calls next(); the destructor stops the reader and joins it (mid-pass too, e.g.
// when the loss diverged).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

struct ReadAheadLimits {
  int depth = 4;                          // batches gathered ahead of the trainer
  int64_t max_bytes = int64_t{16} << 20;  // features of the waiting batches, together
  int advise_ahead = 2;                   // mapped data: batches beyond the gathering one whose pages are requested
};

struct GatheredBatch {
  // rows * sample_numel floats, row-major, page-aligned; null once every batch was handed out. Shared so
  // that a tensor wrapping it can keep it alive; the buffer is reused for a later batch once let go.
  std::shared_ptr<float> features;
  int64_t begin = 0;  // first position in the order
  int64_t rows = 0;
  explicit operator bool() const { return features != nullptr; }
};

class BatchReadAhead {
 public:
  // `data` and `order` (count positions, each a row of `data`) are borrowed and must outlive this object.
  // A position outside `data` or batch_size < 1 is a contract violation (the caller's bug, as for
  // gather). The reader starts at once.
  BatchReadAhead(const Dataset& data, const int64_t* order, int64_t count, int64_t batch_size,
                 ReadAheadLimits limits = {});
  ~BatchReadAhead();
  BatchReadAhead(const BatchReadAhead&) = delete;
  BatchReadAhead& operator=(const BatchReadAhead&) = delete;

  // The next batch (positions [k * batch_size, ...) of the order), blocking until it is gathered; an empty
  // GatheredBatch after the last. What stopped the reader (unavailable: no memory for a batch) instead of
  // the batches it could not gather.
  Result<GatheredBatch> next();

  int64_t batch_count() const { return batches_; }

  // How many readers this process has started: whether `[data] read_ahead`
  // reached the units (tests and diagnostics).
  static int64_t readers_started();

 private:
  void read_all();
  Result<GatheredBatch> gather_batch(int64_t b) const;
  void advise(int64_t b) const;
  int64_t batch_bytes(int64_t b) const;

  const Dataset& data_;
  const int64_t* order_;
  const int64_t count_, batch_size_, batches_;
  const size_t row_floats_;
  const ReadAheadLimits limits_;
  class BufferPool;
  const std::shared_ptr<BufferPool> pool_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<GatheredBatch> ready_;  // guarded by mutex_, as are the four below
  int64_t ready_bytes_ = 0;
  int64_t handed_out_ = 0;
  bool stop_ = false;
  Status failure_;
  std::thread reader_;  // last: started once everything above is set
};

}  // namespace cerebro::datasets
