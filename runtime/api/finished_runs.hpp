#pragma once
// The stores of experiments that do not run (ended, or waiting to resume),
// for the API's and the REPL's reads (detail, units, top, show ...): each is
// opened read-only once and kept open, and the answers computed from it are
// kept too, so fifty pollers of a finished run cost one RocksDB open and one
// view, not fifty of each per poll. The coordinator gives every experiment a
// generation that it bumps whenever the experiment changes state (starts,
// ends, resumes): an entry of an older generation is dropped and the store
// opened again, so a reader never answers from a store that changed since.
//
// Thread-safe (one mutex): the coordinator's reader actor
// (actors/finished_run_reader.hpp) is its only user, in its own thread, so
// the gateway actor never opens RocksDB.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/base/status.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro::api {

// Ended runs kept open at once; the least recently read is closed beyond this.
constexpr size_t kFinishedRunsOpen = 16;
// Answers kept per store (distinct commands and arguments); beyond this they
// are forgotten and computed again, so odd arguments cannot grow memory.
constexpr size_t kFinishedRunAnswers = 64;

class FinishedRuns {
 public:
  explicit FinishedRuns(size_t capacity = kFinishedRunsOpen);

  // The store of `experiment` (RUN_DIR/state under `run_dir`) at
  // `generation`: the open one when it has that generation, else opened
  // read-only now (an older generation's entry and its answers are dropped).
  // An error names the directory.
  Result<std::shared_ptr<const StateStore>> store(const std::string& experiment, const std::string& run_dir,
                                                  uint64_t generation);

  // The answer named `key` (a command and its arguments) for the store of
  // `experiment` at `generation`: computed by `compute` from the store the
  // first time, then kept with the store. A failed computation is not kept.
  Result<std::string> answer(const std::string& experiment, const std::string& run_dir, uint64_t generation,
                             const std::string& key,
                             const std::function<Result<std::string>(const StateStore&)>& compute);

  // Closes the experiment's store and forgets its answers (it changed state).
  void drop(const std::string& experiment);

  size_t open_stores() const;
  // How many times a store was opened so far (a test sees reuse by it).
  uint64_t opened() const;

 private:
  struct Entry {
    uint64_t generation = 0;
    std::shared_ptr<const StateStore> store;
    std::map<std::string, std::string> answers;
  };
  // With the mutex held: the entry, opened when needed, most recent first.
  Result<Entry*> entry(const std::string& experiment, const std::string& run_dir, uint64_t generation);

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> recent_;  // experiment ids, most recently read first
  uint64_t opened_ = 0;
};

}  // namespace cerebro::api
