#include "runtime/scheduling/critical_path_policy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace cerebro {

namespace {
// Ids below this are kept in vectors, others in hash maps.
constexpr int32_t kDenseIds = UnitTimeModel::kDenseIds;
}  // namespace

// ---- UnitTimeModel ----

UnitTimeModel::Factor& UnitTimeModel::Factors::at(int32_t id) {
  if (id >= 0 && id < kDenseIds) {
    if (static_cast<size_t>(id) >= dense.size()) dense.resize(id + 1);
    return dense[id];
  }
  return sparse[id];
}

const UnitTimeModel::Factor* UnitTimeModel::Factors::find_sparse(int32_t id) const {
  auto it = sparse.find(id);
  return it == sparse.end() ? nullptr : &it->second;
}

double UnitTimeModel::Factors::mean_value() const {
  if (mean_stale_) {
    mean_value_ = std::exp(mean_log());
    mean_stale_ = false;
  }
  return mean_value_;
}

double UnitTimeModel::Factors::prior_value(const Factor& f) const {
  double shift = prior_shift_count ? prior_shift_sum / static_cast<double>(prior_shift_count) : 0;
  return std::exp(f.prior_log + shift);
}

double UnitTimeModel::Factors::mean_prior_value() const {
  double shift = prior_shift_count ? prior_shift_sum / static_cast<double>(prior_shift_count) : 0;
  return std::exp(prior_log_sum / static_cast<double>(prior_count) + shift);
}

void UnitTimeModel::Factors::set(Factor& f, double log) {
  if (f.has_prior) {
    prior_shift_sum += log - (f.known ? f.log : f.prior_log);
    if (!f.known) ++prior_shift_count;
  }
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
  mean_stale_ = true;
}

void UnitTimeModel::Factors::reset_log(Factor& f, double log) {
  if (f.has_prior && f.known) prior_shift_sum += log - f.log;
  log_sum += log - f.log;
  f.log = log;
  f.value = std::exp(log);
  mean_stale_ = true;
}

void UnitTimeModel::observe(ConfigId c, WorkerId w, double seconds_per_example) {
  if (!(seconds_per_example > 0) || !std::isfinite(seconds_per_example)) return;
  double t = std::log(seconds_per_example);
  ++observations_;
  if (observations_ <= kYoungObservations * (configs_.known + workers_.known + 2)) {
    if (window_.size() < kWindow) {
      window_.push_back(Sample{c, w, t});
    } else {
      window_[window_next_] = Sample{c, w, t};
      window_next_ = (window_next_ + 1) % kWindow;
    }
  }
  Factor& config = configs_.at(c);
  Factor& worker = workers_.at(w);
  if (worker.node < 0) {
    node_of(worker);
    workers_in_[worker.node] = 1;
    ++worker_groups_;
  }
  // Once every worker is linked, a known config is linked to all of them.
  if (!(config.known && workers_linked())) link(node_of(config), worker.node);
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
  if (window_.size() <= kRefitEachUpTo) refit(kSweeps);  // cheap while there are few samples
}

void UnitTimeModel::set_prior(ConfigId c, double seconds_per_example) {
  if (!(seconds_per_example > 0) || !std::isfinite(seconds_per_example)) return;
  Factor& f = configs_.at(c);
  double log = std::log(seconds_per_example);
  if (f.known) {  // keep the shift's sum over (known, with prior) exact
    if (f.has_prior) {
      configs_.prior_shift_sum += f.prior_log - log;
    } else {
      configs_.prior_shift_sum += f.log - log;
      ++configs_.prior_shift_count;
    }
  }
  if (f.has_prior) {
    configs_.prior_log_sum -= f.prior_log;
  } else {
    ++priors_;
    ++configs_.prior_count;
  }
  configs_.prior_log_sum += log;
  f.has_prior = true;
  f.prior_log = log;
}

int32_t UnitTimeModel::node_of(Factor& f) {
  if (f.node < 0) {
    f.node = static_cast<int32_t>(parent_.size());
    parent_.push_back(f.node);
    workers_in_.push_back(0);
  }
  return f.node;
}

int32_t UnitTimeModel::root(int32_t node) const {
  while (parent_[node] != node) node = parent_[node] = parent_[parent_[node]];  // path halving
  return node;
}

void UnitTimeModel::link(int32_t a, int32_t b) {
  a = root(a);
  b = root(b);
  if (a == b) return;
  if (workers_in_[a] > 0 && workers_in_[b] > 0) --worker_groups_;
  if (workers_in_[a] < workers_in_[b]) std::swap(a, b);  // keep the bigger group's root
  parent_[b] = a;
  workers_in_[a] += workers_in_[b];
}

bool UnitTimeModel::would_link(ConfigId c, WorkerId w) const {
  const Factor* config = configs_.find(c);
  if (!config || !config->known) return false;
  const Factor* worker = workers_.find(w);
  return !worker || worker->node < 0 || root(worker->node) != root(config->node);
}

double UnitTimeModel::seconds_per_example(ConfigId c, WorkerId w) const {
  return configs_.known ? cost(c) / speed(w) : 0;
}

void UnitTimeModel::refit(int sweeps) {
  if (window_.empty() || observations_ > kYoungObservations * (configs_.known + workers_.known)) return;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    // Each config's cost given the speeds, then each worker's speed given the
    // costs: the least-squares fit of log t = log cost - log speed.
    sums_.clear();
    for (const Sample& s : window_) {
      auto& [sum, n] = sums_[s.config];
      sum += s.log_seconds + workers_.at(s.worker).log;
      ++n;
    }
    // A config's prior counts as kPriorWeight observations of prior x shift:
    // on a noisy machine a few slow units of a light config on one worker
    // would otherwise make that worker look slow and a heavy config that ran
    // there look light (measured on a loaded 2-core VM: a cnn fit as cheaper
    // than the mlps, and its chain was left for last).
    if (priors_ > 0) {
      const double shift =
          configs_.prior_shift_count ? configs_.prior_shift_sum / static_cast<double>(configs_.prior_shift_count) : 0;
      for (auto& [c, entry] : sums_) {
        const Factor* f = configs_.find(c);
        if (!f || !f->has_prior) continue;
        entry.first += kPriorWeight * (f->prior_log + shift);
        entry.second += kPriorWeight;
      }
    }
    for (const auto& [c, entry] : sums_)
      configs_.reset_log(configs_.at(c), entry.first / static_cast<double>(entry.second));
    sums_.clear();
    for (const Sample& s : window_) {
      auto& [sum, n] = sums_[s.worker];
      sum += configs_.at(s.config).log - s.log_seconds;
      ++n;
    }
    for (const auto& [w, entry] : sums_)
      workers_.reset_log(workers_.at(w), entry.first / static_cast<double>(entry.second));
  }
}

double UnitTimeModel::known_speed_sum() const {
  double sum = 0;
  for (const Factor& f : workers_.dense) sum += f.known ? f.value : 0;
  for (const auto& entry : workers_.sparse) sum += entry.second.known ? entry.second.value : 0;
  return sum;
}

// ---- CriticalPathPolicy ----

double CriticalPathPolicy::inverse_speed(PartitionId p) const {
  WorkerId fastest = p >= 0 && static_cast<size_t>(p) < fastest_holder_.size() ? fastest_holder_[p] : -1;
  return 1 / model_.speed(fastest);  // an unknown worker has the mean speed
}

CriticalPathPolicy::ConfigProgress& CriticalPathPolicy::progress(ConfigId c) {
  if (c >= 0 && c < kDenseIds) {
    if (static_cast<size_t>(c) >= progress_.size()) progress_.resize(c + 1);
    return progress_[c];
  }
  return sparse_progress_[c];
}

double CriticalPathPolicy::floor() const {
  double spread = remaining_work_ / total_speed_;
  // Every config visits every partition: each has an equal share of the
  // remaining work, and the one whose fastest holder is slowest takes longest.
  double bottleneck = partitions_ > 0 ? remaining_work_ / partitions_ * max_inverse_ : 0;
  return std::max(spread, bottleneck);
}

bool CriticalPathPolicy::is_critical(ConfigId c) const {
  if (c >= 0 && c < kDenseIds) return static_cast<size_t>(c) < dense_critical_.size() && dense_critical_[c];
  return sparse_critical_.count(c) > 0;
}

void CriticalPathPolicy::set_critical(ConfigId c) {
  if (c >= 0 && c < kDenseIds) {
    if (static_cast<size_t>(c) >= dense_critical_.size()) dense_critical_.resize(c + 1, false);
    dense_critical_[c] = true;
  } else {
    sparse_critical_.insert(c);
  }
}

double CriticalPathPolicy::chain(ConfigId c, const ConfigProgress& progress, int32_t epoch) const {
  double done = progress.epoch == epoch ? progress.done_inverse_speed : 0;
  double pending = std::max(0.0, total_inverse_ - done);
  double later_epochs = std::max(0, progress.planned_epochs - epoch - 1);
  return model_.cost(c) * (pending + later_epochs * total_inverse_);
}

void CriticalPathPolicy::insert_critical(double chain, ConfigId c) {
  auto at = std::lower_bound(
      critical_.begin(), critical_.end(), std::make_pair(chain, c),
      [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  critical_.insert(at, {chain, c});
}

void CriticalPathPolicy::erase_critical(ConfigId c) {
  auto it = std::find_if(critical_.begin(), critical_.end(), [&](const auto& e) { return e.second == c; });
  if (it != critical_.end()) critical_.erase(it);
}

void CriticalPathPolicy::prefetch_observation(WorkerId worker, const Unit& u) const {
  (void)worker;
  model_.prefetch_config(u.config);
  if (static_cast<uint32_t>(u.config) < progress_.size())
    __builtin_prefetch(&progress_[static_cast<uint32_t>(u.config)]);
}

void CriticalPathPolicy::set_cost_prior(ConfigId c, double seconds_per_example) {
  model_.set_prior(c, seconds_per_example);
  since_refresh_ = -1;  // chains and the critical list change: refresh at the next decision
}

void CriticalPathPolicy::observe(const Observation& o) {
  double seconds = o.examples > 0 ? o.train_s / static_cast<double>(o.examples) : o.train_s;
  bool first_of_config = !model_.knows_config(o.unit.config);
  model_.observe(o.unit.config, o.worker, seconds);
  newly_measured_ = newly_measured_ || (first_of_config && model_.knows_config(o.unit.config));
  PartitionId p = o.unit.partition;
  if (p >= 0 && p < kDenseIds) {
    if (static_cast<size_t>(p) >= fastest_holder_.size()) fastest_holder_.resize(p + 1, -1);
    if (static_cast<size_t>(p) >= slowest_holder_.size()) slowest_holder_.resize(p + 1, -1);
    WorkerId& fastest = fastest_holder_[p];
    if (fastest < 0 || model_.speed(o.worker) > model_.speed(fastest)) fastest = o.worker;
    WorkerId& slowest = slowest_holder_[p];
    if (slowest < 0 || model_.speed(o.worker) < model_.speed(slowest)) slowest = o.worker;
  }
  ConfigProgress& done = progress(o.unit.config);
  if (done.epoch != o.unit.epoch) {
    done.epoch = o.unit.epoch;
    done.done_inverse_speed = 0;
  }
  done.done_inverse_speed += inverse_speed(p);
  remaining_work_ = std::max(0.0, remaining_work_ - model_.cost(o.unit.config));
  if (is_critical(o.unit.config)) {  // idle again: back in the list with its shorter chain
    erase_critical(o.unit.config);
    insert_critical(chain(o.unit.config, done, o.unit.epoch), o.unit.config);
  }
  if (since_refresh_ >= 0) ++since_refresh_;
}

// Recomputes, from the book, what observe() keeps up to date incrementally
// (totals drift as the estimates change; configs come and go) and which
// configs are critical.
void CriticalPathPolicy::refresh(const MopBook& book) {
  since_refresh_ = 0;
  newly_measured_ = false;
  model_.refit(2);  // warm: observe() keeps the factors close
  if (book.config_count() != configs_.size()) {
    configs_ = book.configs();
    unmeasured_.clear();
    for (ConfigId c : configs_) {
      if (!model_.knows_config(c)) unmeasured_.push_back(c);
    }
  }
  int32_t partitions = book.num_partitions();
  if (fastest_holder_.size() < static_cast<size_t>(partitions)) fastest_holder_.resize(partitions, -1);
  total_inverse_ = 0;
  max_inverse_ = 0;
  for (PartitionId p = 0; p < partitions; ++p) {
    total_inverse_ += inverse_speed(p);
    max_inverse_ = std::max(max_inverse_, inverse_speed(p));
  }
  partitions_ = partitions;
  total_speed_ = model_.known_speed_sum();
  if (total_speed_ <= 0 && model_.has_priors()) {
    // Nothing measured yet, but the priors rank the configs: every worker
    // counts at the mean speed (1) until measured.
    total_speed_ = static_cast<double>(book.workers().size());
  }
  remaining_work_ = 0;
  std::vector<std::pair<double, ConfigId>>& chains = chains_;
  chains.clear();
  dense_critical_.assign(dense_critical_.size(), false);
  sparse_critical_.clear();
  for (ConfigId c : configs_) {
    const MopBook::ConfigSummary now = book.summary(c);
    if (now.state != ConfigState::pending_epoch && now.state != ConfigState::awaiting_decision) continue;
    ConfigProgress& config = progress(c);
    config.planned_epochs = now.planned_epochs;
    remaining_work_ += model_.cost(c) * static_cast<double>(now.remaining_units);
    chains.emplace_back(chain(c, config, now.epoch), c);
  }
  critical_.clear();
  if (total_speed_ <= 0) return;  // nothing measured and no priors: no idea what is critical
  // The longest chain is always critical: in a small run the floor, which
  // assumes the work spreads perfectly, can hide that it must start now.
  double longest = 0;
  for (const auto& entry : chains) longest = std::max(longest, entry.first);
  threshold_ = std::min((1 - kCriticalSlack) * floor(), longest);
  const double threshold = threshold_;
  auto last = std::partition(chains.begin(), chains.end(), [&](const auto& e) { return e.first >= threshold; });
  size_t keep = std::min<size_t>(kMaxCritical, last - chains.begin());
  std::partial_sort(chains.begin(), chains.begin() + keep, last, [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; i < keep; ++i) {
    ConfigId c = chains[i].second;
    set_critical(c);
    if (!book.config_busy(c)) critical_.push_back(chains[i]);
  }
}

std::vector<ConfigId> CriticalPathPolicy::critical() const {
  std::vector<ConfigId> out;
  for (const auto& entry : critical_) out.push_back(entry.second);
  return out;
}

std::optional<Unit> CriticalPathPolicy::choose_critical(WorkerId w, const MopBook& book) {
  if (critical_.empty() || total_speed_ <= 0) return std::nullopt;
  const double limit = floor();
  const double threshold = std::min((1 - kCriticalSlack) * limit, threshold_);
  const double worker_inverse = 1 / model_.speed(w);
  const std::vector<PartitionId>& holds = book.holdings(w);
  std::optional<Unit> best;
  double best_value = 0;
  // Longest chain first: once a chain cannot beat the best value, stop.
  size_t scanned = 0;
  for (const auto& [chain, c] : critical_) {
    if (best && chain <= best_value) break;
    if (++scanned > kScanLimit) break;
    // Pending partitions only exist in pending_epoch: no state check needed.
    const PartitionSet& pending = book.pending_set(c);
    if (pending.empty() || book.config_busy(c)) continue;
    for (PartitionId p : holds) {
      if (!pending.contains(p)) continue;
      double lost = model_.cost(c) * std::max(0.0, worker_inverse - inverse_speed(p));
      if (lost > 0 && chain + lost > limit) continue;  // a faster holder should run it
      double value = chain - lost;
      if (value >= threshold && (!best || value > best_value)) {
        best = Unit{c, p, book.epoch(c)};
        best_value = value;
      }
    }
  }
  return best;
}

std::optional<Unit> CriticalPathPolicy::choose_longest_chain(WorkerId w, const MopBook& book) {
  std::optional<Unit> best;
  double best_chain = -1;
  for (ConfigId c : configs_) {
    if (book.state(c) != ConfigState::pending_epoch || book.config_busy(c)) continue;
    const PartitionSet& pending = book.pending_set(c);
    if (pending.empty()) continue;
    const int32_t epoch = book.epoch(c);
    ConfigProgress& config = progress(c);
    config.planned_epochs = book.planned_epochs(c);
    double length = chain(c, config, epoch);
    if (length <= best_chain) continue;  // ties: the config added first
    for (PartitionId p : book.holdings(w)) {
      if (pending.contains(p)) {
        best = Unit{c, p, epoch};
        best_chain = length;
        break;
      }
    }
  }
  return best;
}

std::optional<Unit> CriticalPathPolicy::choose_unmeasured(WorkerId w, const MopBook& book) {
  const std::vector<PartitionId>& holds = book.holdings(w);
  size_t kept = 0;
  std::optional<Unit> found;
  for (size_t i = 0; i < unmeasured_.size(); ++i) {
    ConfigId c = unmeasured_[i];
    if (model_.knows_config(c)) continue;  // measured meanwhile: drop it
    unmeasured_[kept++] = c;
    if (found || book.config_busy(c)) continue;
    const PartitionSet& pending = book.pending_set(c);
    for (PartitionId p : holds) {
      if (pending.contains(p)) {
        found = Unit{c, p, book.epoch(c)};
        break;
      }
    }
  }
  unmeasured_.resize(kept);
  return found;
}

std::optional<Unit> CriticalPathPolicy::choose_linking(WorkerId w, const MopBook& book) {
  std::optional<Unit> best;
  for (int draw = 0; draw < kMatchDraws; ++draw) {
    std::optional<Unit> u = uniform_.choose(w, book);
    if (!u) return std::nullopt;  // nothing eligible
    if (model_.would_link(u->config, w) && (!best || model_.cost(u->config) < model_.cost(best->config))) best = u;
  }
  return best;
}

CriticalPathPolicy::OtherHolders CriticalPathPolicy::other_holders(WorkerId w, const MopBook& book,
                                                                   double ratio) const {
  OtherHolders out;
  if (!model_.knows_worker(w)) return out;
  double speed = model_.speed(w);
  for (PartitionId p : book.holdings(w)) {
    if (static_cast<size_t>(p) < fastest_holder_.size() && fastest_holder_[p] >= 0 &&
        model_.speed(fastest_holder_[p]) > ratio * speed) {
      out.faster = true;
    }
    if (static_cast<size_t>(p) < slowest_holder_.size() && slowest_holder_[p] >= 0 &&
        model_.speed(slowest_holder_[p]) * ratio < speed) {
      out.slower = true;
    }
  }
  return out;
}

bool CriticalPathPolicy::faster_holder_present(WorkerId w, PartitionId p, const MopBook& book) const {
  WorkerId fastest = static_cast<size_t>(p) < fastest_holder_.size() ? fastest_holder_[p] : -1;
  return fastest >= 0 && fastest != w && model_.speed(fastest) > 1.1 * model_.speed(w) && book.has_worker(fastest) &&
         book.holds(fastest, p);
}

double CriticalPathPolicy::chain_if_run(const Unit& u, WorkerId w, const MopBook& book) {
  double lost = std::max(0.0, 1 / model_.speed(w) - inverse_speed(u.partition));
  return chain(u.config, progress(u.config), book.epoch(u.config)) + model_.cost(u.config) * lost;
}

std::optional<Unit> CriticalPathPolicy::choose(WorkerId w, const MopBook& book) {
  if (book.worker_busy(w)) return std::nullopt;
  int64_t interval = static_cast<int64_t>(book.config_count()) + book.num_partitions();
  // A config's first measurement may make it the longest: refresh soon after
  // (in a large run not after every one, which would cost O(configs^2)).
  bool learned = newly_measured_ && since_refresh_ * 16 >= interval;
  if (since_refresh_ < 0 || since_refresh_ >= interval || learned || book.config_count() != configs_.size()) {
    refresh(book);
  }
  std::optional<Unit> u;
  // Until the measured workers are linked, speeds are guesses that can send
  // heavy units to a slow worker: link them first, cheaply.
  if (!model_.workers_linked() || !model_.knows_worker(w)) u = choose_linking(w, book);
  if (!u && static_cast<int32_t>(book.holdings(w).size()) == book.num_partitions() &&
      configs_.size() <= kLongestFirstUpTo &&
      !(total_speed_ > 0 && other_holders(w, book, kLongestFirstSlowerThan).faster)) {
    u = choose_longest_chain(w, book);
  }
  if (!u) u = choose_critical(w, book);
  // Measure every config early: an unmeasured config may be the longest.
  if (!u && !unmeasured_.empty()) u = choose_unmeasured(w, book);
  if (!u) {
    u = uniform_.choose(w, book);
    const OtherHolders others = u && total_speed_ > 0 ? other_holders(w, book) : OtherHolders{};
    if (others.faster) {
      // A slow worker must not stretch a chain past the floor: redraw a few
      // times for a unit that does not, else take the least harmful.
      const double limit = floor();
      double length = chain_if_run(*u, w, book);
      for (int draw = 1; length > limit && draw < kMatchDraws; ++draw) {
        std::optional<Unit> other = uniform_.choose(w, book);
        double other_length = chain_if_run(*other, w, book);
        if (other_length < length) {
          u = other;
          length = other_length;
        }
      }
      // Every unit found would: better to wait for the faster holder, which
      // is there and will ask for work when its unit ends.
      if (length > limit && faster_holder_present(w, u->partition, book)) return std::nullopt;
    } else if (others.slower) {
      // The fastest holder takes the heaviest of a few picks: light units are
      // what slower holders can do without stretching a chain.
      for (int draw = 1; draw < kMatchDraws; ++draw) {
        std::optional<Unit> other = uniform_.choose(w, book);
        if (model_.cost(other->config) > model_.cost(u->config)) u = other;
      }
    }
  }
  if (u && is_critical(u->config)) erase_critical(u->config);  // running now
  return u;
}

}  // namespace cerebro
