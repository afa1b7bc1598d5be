#pragma once
// The durable states of recently committed configs, kept in memory by the
// scheduler. A config's next unit needs exactly the state
// its last unit produced; once that unit's commit has answered (the state is
// durable), the scheduler can hand the state to the next unit itself instead
// of asking the checkpoint actor to read it back from RocksDB: that read was a
// round trip through two more threads, a RocksDB get, a checksum and a copy on
// every small unit's path.
//
// A kept state is the config's latest durable state only while nothing else
// writes that config's state: whoever writes it otherwise (a search's state
// copy, a gang's commit, a failed commit that may or may not have been
// written) erases its entry first, and the next unit reads from the store.
// Bounded: states larger than `max_state_bytes` are not kept (large units do
// not need it, and a copy of the state is made at the result), and the least
// recently put go first beyond `max_bytes` in all.

#include <cstdint>
#include <list>
#include <map>
#include <optional>

#include "runtime/base/ids.hpp"
#include "runtime/base/messages.hpp"

namespace cerebro {

class DurableStateCache {
 public:
  explicit DurableStateCache(int64_t max_bytes = int64_t{64} << 20, int64_t max_state_bytes = int64_t{4} << 20)
      : max_bytes_(max_bytes), max_state_bytes_(max_state_bytes) {}

  // Whether a state of `bytes` would be kept (the caller copies it at the
  // result only then).
  bool keeps(size_t bytes) const { return static_cast<int64_t>(bytes) <= max_state_bytes_ && max_bytes_ > 0; }

  // `state` is `config`'s latest durable state: call once its commit answered.
  void put(ConfigId config, StateBytes state);
  // `config`'s kept state, taken out (it goes into the task of the config's
  // next unit, with no copy; that unit's commit puts the next one, and a
  // failed attempt reads the store), if any.
  std::optional<StateBytes> take(ConfigId config);
  // `config`'s state is being written by someone else: read it from the store.
  void erase(ConfigId config);

  size_t size() const { return entries_.size(); }
  int64_t bytes() const { return bytes_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  struct Entry {
    ConfigId config;
    StateBytes state;
  };
  int64_t max_bytes_, max_state_bytes_;
  int64_t bytes_ = 0, hits_ = 0, misses_ = 0;
  std::list<Entry> entries_;  // most recently put first
  std::map<ConfigId, std::list<Entry>::iterator> by_config_;
};

}  // namespace cerebro
