#include "runtime/critical_path_policy.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <cstdlib>

namespace cerebro {

namespace {
// Ids below this are kept in vectors, others in hash maps.
constexpr int32_t kDenseIds = 1 << 20;
double slack() { static double v = getenv("CP_SLACK") ? atof(getenv("CP_SLACK")) : CriticalPathPolicy::kCriticalSlack; return v; }
size_t maxcrit() { static size_t v = getenv("CP_MAXCRIT") ? atol(getenv("CP_MAXCRIT")) : CriticalPathPolicy::kMaxCritical; return v; }
}  // namespace

// ---- UnitTimeModel ----

UnitTimeModel::Factor& UnitTimeModel::Factors::at(int32_t id) {
  if (id >= 0 && id < kDenseIds) {
    if (static_cast<size_t>(id) >= dense.size()) dense.resize(id + 1);
    return dense[id];
  }
  return sparse[id];
}

const UnitTimeModel::Factor* UnitTimeModel::Factors::find(int32_t id) const {
  if (id >= 0 && id < kDenseIds) return static_cast<size_t>(id) < dense.size() ? &dense[id] : nullptr;
  auto it = sparse.find(id);
  return it == sparse.end() ? nullptr : &it->second;
}

double UnitTimeModel::Factors::value_or_mean(int32_t id) const {
  const Factor* f = find(id);
  if (f && f->known) return f->value;
  return std::exp(mean_log());
}

void UnitTimeModel::Factors::set(Factor& f, double log) {
  if (f.known) {
    log_sum += log - f.log;
  } else {
    f.known = true;
    log_sum += log;
    ++known;
  }
  f.log = log;
  f.value = std::exp(log);
  ++f.observations;
}

void UnitTimeModel::observe(ConfigId c, WorkerId w, double seconds_per_example) {
  if (!(seconds_per_example > 0) || !std::isfinite(seconds_per_example)) return;
  double t = std::log(seconds_per_example);
  Factor& config = configs_.at(c);
  Factor& worker = workers_.at(w);
  if (!config.known && !worker.known) {
    workers_.set(worker, workers_.mean_log());  // a new worker: assume the mean speed
    configs_.set(config, t + worker.log);
  } else if (!config.known) {
    configs_.set(config, t + worker.log);
    ++worker.observations;
  } else if (!worker.known) {
    workers_.set(worker, config.log - t);
    ++config.observations;
  } else {
    double surprise = t - (config.log - worker.log);
    double config_step = 1 / std::min(kMemory, static_cast<double>(config.observations) + 1);
    double worker_step = 1 / std::min(kMemory, static_cast<double>(worker.observations) + 1);
    configs_.set(config, config.log + surprise * config_step);
    workers_.set(worker, worker.log - surprise * worker_step);
  }
}

bool UnitTimeModel::knows_config(ConfigId c) const {
  const Factor* f = configs_.find(c);
  return f && f->known;
}

bool UnitTimeModel::knows_worker(WorkerId w) const {
  const Factor* f = workers_.find(w);
  return f && f->known;
}

double UnitTimeModel::cost(ConfigId c) const { return configs_.value_or_mean(c); }
double UnitTimeModel::speed(WorkerId w) const { return workers_.value_or_mean(w); }

double UnitTimeModel::seconds_per_example(ConfigId c, WorkerId w) const {
  return configs_.known ? cost(c) / speed(w) : 0;
}

double UnitTimeModel::known_speed_sum() const {
  double sum = 0;
  for (const Factor& f : workers_.dense) sum += f.known ? f.value : 0;
  for (const auto& entry : workers_.sparse) sum += entry.second.known ? entry.second.value : 0;
  return sum;
}

// ---- CriticalPathPolicy ----

double CriticalPathPolicy::inverse_speed(PartitionId p) const {
  WorkerId fastest = static_cast<size_t>(p) < fastest_holder_.size() ? fastest_holder_[p] : -1;
  return 1 / model_.speed(fastest);  // an unknown worker has the mean speed
}

double CriticalPathPolicy::chain(ConfigId c, const MopBook& book) const {
  int32_t epoch = book.epoch(c);
  auto it = progress_.find(c);
  double done = it != progress_.end() && it->second.epoch == epoch ? it->second.done_inverse_speed : 0;
  double pending = std::max(0.0, total_inverse_ - done);
  double later_epochs = std::max(0, book.planned_epochs(c) - epoch - 1);
  return model_.cost(c) * (pending + later_epochs * total_inverse_);
}

void CriticalPathPolicy::observe(const Observation& o) {
  double seconds = o.examples > 0 ? o.train_s / static_cast<double>(o.examples) : o.train_s;
  model_.observe(o.unit.config, o.worker, seconds);
  PartitionId p = o.unit.partition;
  if (p >= 0) {
    if (static_cast<size_t>(p) >= fastest_holder_.size()) fastest_holder_.resize(p + 1, -1);
    WorkerId& fastest = fastest_holder_[p];
    if (fastest < 0 || model_.speed(o.worker) > model_.speed(fastest)) fastest = o.worker;
  }
  ConfigProgress& progress = progress_[o.unit.config];
  if (progress.epoch != o.unit.epoch) progress = ConfigProgress{o.unit.epoch, 0};
  progress.done_inverse_speed += inverse_speed(p);
  remaining_work_ = std::max(0.0, remaining_work_ - model_.cost(o.unit.config));
  if (since_refresh_ >= 0) ++since_refresh_;
}

void CriticalPathPolicy::refresh(const MopBook& book) {
  since_refresh_ = 0;
  if (book.config_count() != configs_.size()) configs_ = book.configs();
  int32_t partitions = book.num_partitions();
  if (fastest_holder_.size() < static_cast<size_t>(partitions)) fastest_holder_.resize(partitions, -1);
  total_inverse_ = 0;
  for (PartitionId p = 0; p < partitions; ++p) total_inverse_ += inverse_speed(p);
  total_speed_ = model_.known_speed_sum();
  remaining_work_ = 0;
  std::vector<std::pair<double, ConfigId>> chains;
  for (ConfigId c : configs_) {
    ConfigState state = book.state(c);
    if (state != ConfigState::pending_epoch && state != ConfigState::awaiting_decision) continue;
    remaining_work_ += model_.cost(c) * static_cast<double>(book.remaining_units(c));
    chains.emplace_back(chain(c, book), c);
  }
  critical_.clear();
  if (total_speed_ <= 0) return;  // nothing measured yet: no idea what is critical
  double threshold = (1 - slack()) * remaining_work_ / total_speed_;
  auto last = std::partition(chains.begin(), chains.end(), [&](const auto& e) { return e.first >= threshold; });
  size_t keep = std::min<size_t>(maxcrit(), last - chains.begin());
  std::partial_sort(chains.begin(), chains.begin() + keep, last,
                    [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (size_t i = 0; i < keep; ++i) critical_.push_back(chains[i].second);
}

std::optional<Unit> CriticalPathPolicy::choose_critical(WorkerId w, const MopBook& book) {
  if (critical_.empty() || total_speed_ <= 0) return std::nullopt;
  const double threshold = (1 - slack()) * remaining_work_ / total_speed_;
  const double worker_inverse = 1 / model_.speed(w);
  const std::set<PartitionId>& holds = book.holdings(w);
  std::optional<Unit> best;
  double best_value = 0;
  for (ConfigId c : critical_) {
    if (book.state(c) != ConfigState::pending_epoch || book.config_busy(c)) continue;
    const PartitionSet& pending = book.pending_set(c);
    double config_chain = chain(c, book);
    double cost = model_.cost(c);
    for (PartitionId p : holds) {
      if (!pending.contains(p)) continue;
      double value = config_chain - cost * std::max(0.0, worker_inverse - inverse_speed(p));
      if (value >= threshold && (!best || value > best_value)) {
        best = Unit{c, p, book.epoch(c)};
        best_value = value;
      }
    }
  }
  return best;
}

std::optional<Unit> CriticalPathPolicy::choose(WorkerId w, const MopBook& book) {
  if (book.worker_busy(w)) return std::nullopt;
  int64_t interval = std::max<int64_t>(1, static_cast<int64_t>(book.config_count() + book.num_partitions()) / 4);
  if (since_refresh_ < 0 || since_refresh_ >= interval || book.config_count() != configs_.size()) refresh(book);
  if (std::optional<Unit> u = choose_critical(w, book)) return u;
  return uniform_.choose(w, book);
}

}  // namespace cerebro
