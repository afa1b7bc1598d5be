#pragma once
// The configs' durable states the scheduler actor hands to their next units
// itself, instead of asking the checkpoint actor to read them back from the
// store: the states its own commits made durable (DurableStateCache,
// runtime/store/state_cache.hpp says why), and those it reads ahead at the
// start, before each config's first unit.
//
// Reads ahead: every config waiting for units (and not running) is wanted,
// one read at a time, in config order. A config stops being wanted when a
// unit of it is dispatched or its state is written by someone else; a read
// that answers after that is stale (it may be older than the config's state
// by then) and is dropped. A state too large to keep ends the reads (the
// others are likely as large: reading them would be wasted).
//
// Not thread safe: one owner (the scheduler actor, actors/scheduler*.cpp).

#include <cstddef>
#include <optional>
#include <set>

#include "runtime/base/ids.hpp"
#include "runtime/base/messages.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/store/state_cache.hpp"

namespace cerebro {

class KeptStates {
 public:
  // `enabled` false keeps nothing: every unit reads its state from the store
  // (under test fault injection, whose damaged and unreadable states must be
  // read back to be found).
  explicit KeptStates(bool enabled, DurableStateCache cache = DurableStateCache())
      : enabled_(enabled), cache_(std::move(cache)) {}

  bool enabled() const { return enabled_; }
  // Whether a state of `bytes` would be kept (the shell copies a result's
  // state for its commit only then).
  bool keeps(size_t bytes) const { return enabled_ && cache_.keeps(bytes); }

  // --- Reads ahead.
  // At the start: every config of `book` waiting for units and not running.
  void want_waiting(const MopBook& book);
  // The read to start now, if any: none while one is in flight.
  std::optional<ConfigId> next_read();
  // The read of `config` answered with its state: kept unless stale. A state
  // too large to keep ends the reads.
  void read_answered(ConfigId config, StateBytes state);
  // The read of `config` failed: its unit will read the store itself (and
  // report what is wrong).
  void read_failed(ConfigId config);
  bool reading() const { return reading_; }
  bool wanted(ConfigId config) const { return wanted_.count(config) > 0; }

  // --- Units.
  // A unit of `config` is dispatched: its kept state, if any, taken out (it
  // goes into the unit's task). A read of it in flight is stale from now on:
  // older than what this unit makes.
  std::optional<StateBytes> take(ConfigId config);
  // `config`'s unit committed `state`: its latest durable state.
  void committed(ConfigId config, StateBytes state);
  // `config`'s state is being written by someone else (a state copy, a gang's
  // or pipeline's commit, a commit that failed): its next unit reads the store.
  void forget(ConfigId config);

  const DurableStateCache& cache() const { return cache_; }

 private:
  bool enabled_;
  DurableStateCache cache_;
  std::set<ConfigId> wanted_;
  bool reading_ = false;
};

}  // namespace cerebro
