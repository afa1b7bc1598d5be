#include "runtime/scheduling/kept_states.hpp"

namespace cerebro {

void KeptStates::want_waiting(const MopBook& book) {
  if (!enabled_) return;
  for (auto c : book.configs())
    if (book.state(c) == ConfigState::pending_epoch) wanted_.insert(c);
  for (const auto& w : book.workers())
    if (auto running = book.running_on(w)) wanted_.erase(running->config);
}

std::optional<ConfigId> KeptStates::next_read() {
  if (reading_ || wanted_.empty()) return std::nullopt;
  reading_ = true;
  return *wanted_.begin();
}

void KeptStates::read_answered(ConfigId config, StateBytes state) {
  reading_ = false;
  if (!wanted_.erase(config)) return;  // dispatched or written meanwhile: stale
  if (!cache_.keeps(state.size())) {
    wanted_.clear();
    return;
  }
  cache_.put(config, std::move(state));
}

void KeptStates::read_failed(ConfigId config) {
  reading_ = false;
  wanted_.erase(config);
}

std::optional<StateBytes> KeptStates::take(ConfigId config) {
  wanted_.erase(config);
  if (!enabled_) return std::nullopt;
  return cache_.take(config);
}

void KeptStates::committed(ConfigId config, StateBytes state) {
  if (enabled_) cache_.put(config, std::move(state));
}

void KeptStates::forget(ConfigId config) {
  cache_.erase(config);
  wanted_.erase(config);
}

}  // namespace cerebro
