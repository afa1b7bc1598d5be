#include "runtime/store/state_cache.hpp"

namespace cerebro {

void DurableStateCache::put(ConfigId config, StateBytes state) {
  erase(config);
  if (!keeps(state.size())) return;
  bytes_ += static_cast<int64_t>(state.size());
  entries_.push_front(Entry{config, std::move(state)});
  by_config_[config] = entries_.begin();
  while (bytes_ > max_bytes_ && !entries_.empty()) erase(entries_.back().config);
}

std::optional<StateBytes> DurableStateCache::take(ConfigId config) {
  auto it = by_config_.find(config);
  if (it == by_config_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  StateBytes state = std::move(it->second->state);
  bytes_ -= static_cast<int64_t>(state.size());
  entries_.erase(it->second);
  by_config_.erase(it);
  return state;
}

void DurableStateCache::erase(ConfigId config) {
  auto it = by_config_.find(config);
  if (it == by_config_.end()) return;
  bytes_ -= static_cast<int64_t>(it->second->state.size());
  entries_.erase(it->second);
  by_config_.erase(it);
}

}  // namespace cerebro
