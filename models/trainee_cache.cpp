// A worker's built models, kept between its units (models/trainee_cache.hpp).
#include "models/trainee_cache.hpp"

#include <chrono>
#include <list>
#include <map>

#include <fmt/format.h>

#include "models/trainee.hpp"

namespace cerebro::models {

using namespace detail;

struct TraineeCache::Impl {
  struct Entry {
    std::string key;
    Trainee trainee;
    int64_t bytes = 0;
  };
  int64_t max_bytes = 0;
  int64_t bytes = 0;
  int64_t builds = 0, reuses = 0;
  std::list<Entry> entries;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator> by_key;

  // Takes the entry for `key` out of the cache (the caller puts it back when
  // the unit succeeds: a unit that throws leaves nothing half-trained behind).
  std::optional<Trainee> take(const std::string& key) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return std::nullopt;
    Trainee t = std::move(it->second->trainee);
    bytes -= it->second->bytes;
    entries.erase(it->second);
    by_key.erase(it);
    return t;
  }

  void put(const std::string& key, Trainee t) {
    int64_t size = 0;
    for (const auto& [name, tensor] : t.model->named_state()) size += static_cast<int64_t>(tensor.nbytes());
    if (size > max_bytes) return;
    entries.push_front(Entry{key, std::move(t), size});
    by_key[key] = entries.begin();
    bytes += size;
    while (bytes > max_bytes && !entries.empty()) {
      bytes -= entries.back().bytes;
      by_key.erase(entries.back().key);
      entries.pop_back();
    }
  }
};

TraineeCache::TraineeCache(int64_t max_state_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->max_bytes = max_state_bytes;
}
TraineeCache::~TraineeCache() = default;
int64_t TraineeCache::builds() const { return impl_->builds; }
int64_t TraineeCache::reuses() const { return impl_->reuses; }
size_t TraineeCache::size() const { return impl_->entries.size(); }

namespace {

// The config and the data it is built for: equal keys build equal models.
std::string key_of(const UnitInput& in) {
  return fmt::format("{}|{}|{}|{}", in.params->dump(), fmt::join(in.shape.sample_shape, ","), in.shape.num_classes,
                     static_cast<int>(in.shape.task));
}

// What a fresh build has and a used trainee may not: no gradients.
void clear_gradients(Trainee& t) {
  for (auto& p : t.model->parameters()) p.mutable_grad() = torch::Tensor();
}

}  // namespace

Result<UnitOutput> train_unit(const UnitInput& in, TraineeCache& cache) {
  auto& impl = cache.impl();
  return guarded<UnitOutput>("training failed", [&] {
    UnitOutput out;
    auto t0 = std::chrono::steady_clock::now();
    auto model = in.params->find("model");
    const bool reusable = model != in.params->end() && model->is_string() && is_builtin_model(*model);
    const std::string key = reusable ? key_of(in) : std::string();
    std::optional<Trainee> kept = reusable ? impl.take(key) : std::nullopt;
    Trainee t = kept ? std::move(*kept) : build(*in.params, in.shape);
    ++(kept ? impl.reuses : impl.builds);
    if (kept) clear_gradients(t);
    restore_state(t, *in.state);
    out.restore_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    train_restored(t, in, out);
    if (reusable) impl.put(key, std::move(t));
    return out;
  });
}

}  // namespace cerebro::models
