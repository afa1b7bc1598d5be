#include "runtime/api/finished_runs.hpp"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace cerebro::api {

FinishedRuns::FinishedRuns(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

Result<FinishedRuns::Entry*> FinishedRuns::entry(const std::string& experiment, const std::string& run_dir,
                                                 uint64_t generation) {
  auto it = entries_.find(experiment);
  if (it != entries_.end() && it->second.generation != generation) {
    // The experiment changed state since this store was opened.
    entries_.erase(it);
    recent_.remove(experiment);
    it = entries_.end();
  }
  if (it == entries_.end()) {
    auto opened = StateStore::open_read_only((fs::path(run_dir) / "state").string());
    if (!opened.ok()) return opened.status();
    ++opened_;
    Entry fresh;
    fresh.generation = generation;
    fresh.store = std::shared_ptr<const StateStore>(std::move(opened).value());
    it = entries_.emplace(experiment, std::move(fresh)).first;
    while (entries_.size() > capacity_ && !recent_.empty()) {
      entries_.erase(recent_.back());
      recent_.pop_back();
    }
  } else {
    recent_.remove(experiment);
  }
  recent_.push_front(experiment);
  return &it->second;
}

Result<std::shared_ptr<const StateStore>> FinishedRuns::store(const std::string& experiment, const std::string& run_dir,
                                                              uint64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entry(experiment, run_dir, generation);
  if (!e.ok()) return e.status();
  return (*e)->store;
}

Result<std::string> FinishedRuns::answer(const std::string& experiment, const std::string& run_dir, uint64_t generation,
                                         const std::string& key,
                                         const std::function<Result<std::string>(const StateStore&)>& compute) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entry(experiment, run_dir, generation);
  if (!e.ok()) return e.status();
  auto& answers = (*e)->answers;
  if (auto found = answers.find(key); found != answers.end()) return found->second;
  auto computed = compute(*(*e)->store);
  if (!computed.ok()) return computed;
  if (answers.size() >= kFinishedRunAnswers) answers.clear();
  answers.emplace(key, *computed);
  return computed;
}

void FinishedRuns::drop(const std::string& experiment) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(experiment);
  recent_.remove(experiment);
}

size_t FinishedRuns::open_stores() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

uint64_t FinishedRuns::opened() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return opened_;
}

}  // namespace cerebro::api
