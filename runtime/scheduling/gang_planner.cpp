#include "runtime/scheduling/gang_planner.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

double gang_seconds(double unit_s, int32_t k, const GangCosts& costs) {
  double ring = 2.0 * (k - 1) / k;
  return unit_s + k * costs.steps_per_unit * costs.allreduce_s * ring + costs.setup_s;
}

GangEstimate estimate_gang(const GangEstimateInput& in, int32_t k, const GangCosts& costs) {
  GangEstimate e;
  e.members = k;
  e.gang_s = gang_seconds(in.unit_s, k, costs) * in.gang_factor;
  double n = std::max(1, in.workers);
  double remaining = static_cast<double>(in.remaining_units);
  double alone = in.mop_unit_s > 0 ? in.mop_unit_s : in.unit_s;
  double work = in.other_work_s + remaining * alone;
  e.mop_finish_s = std::max({work / n, remaining * alone, in.other_chain_s});
  double gang_work = work + remaining * (e.gang_s - alone);
  e.gang_finish_s = std::max({gang_work / n, remaining * e.gang_s / k, in.other_chain_s});
  e.gang_wins = e.gang_finish_s < (1 - costs.margin) * e.mop_finish_s;
  return e;
}

Status GangPlanner::check(const GangCosts& costs) {
  if (costs.max_gang < 2)
    return Status::invalid_argument(fmt::format("GangPlanner: max_gang must be >= 2, got {}", costs.max_gang));
  if (!(costs.allreduce_s >= 0) || !(costs.setup_s >= 0) || !(costs.steps_per_unit >= 0)) {
    return Status::invalid_argument(
        fmt::format("GangPlanner: allreduce_s, setup_s and steps_per_unit must be >= 0, got {}, {}, {}",
                    costs.allreduce_s, costs.setup_s, costs.steps_per_unit));
  }
  if (!(costs.margin >= 0 && costs.margin < 1))
    return Status::invalid_argument(fmt::format("GangPlanner: margin must be in [0, 1), got {}", costs.margin));
  return Status::ok_status();
}

GangPlanner::GangPlanner(Parallelism mode, GangCosts costs) : mode_(mode), costs_(costs) {
  if (auto checked = check(costs); !checked.ok()) contract_violation("GangPlanner", checked.message());
}

void GangPlanner::observe(const SchedulingPolicy::Observation& o) {
  if (!(o.train_s > 0) || !std::isfinite(o.train_s)) return;
  auto config = config_means_.find(o.unit.config);
  if (config != config_means_.end() && config->second.count > 0) {
    Mean& ratio = worker_ratios_[o.worker];
    ratio.sum += o.train_s / config->second.value();
    ++ratio.count;
  }
  double normalised = o.train_s / worker_factor(o.worker);
  Mean& mean = config_means_[o.unit.config];
  mean.sum += normalised;
  ++mean.count;
  all_units_.sum += normalised;
  ++all_units_.count;
}

void GangPlanner::observe_allreduce(int32_t members, double seconds_per_step) {
  if (members < 2 || !(seconds_per_step >= 0) || !std::isfinite(seconds_per_step)) return;
  double ring = 2.0 * (members - 1) / members;
  costs_.allreduce_s = seconds_per_step / ring;
  costs_.allreduce_known = true;
}

void GangPlanner::observe_gang(int32_t members, int64_t steps, double allreduce_s) {
  if (members < 2 || steps <= 0) return;
  observe_allreduce(members, allreduce_s / static_cast<double>(steps));
  costs_.steps_per_unit = static_cast<double>(steps) / members;
}

void GangPlanner::observe_gang(const std::vector<MopBook::GangMember>& members, int64_t steps, double allreduce_s,
                               double attempt_s) {
  const auto k = static_cast<int32_t>(members.size());
  if (k < 2 || steps <= 0) return;
  observe_gang(k, steps, allreduce_s);
  if (!(attempt_s > 0) || !std::isfinite(attempt_s)) return;
  double slowest = 0;
  for (const MopBook::GangMember& m : members) {
    auto own = config_means_.find(m.unit.config);
    if (own == config_means_.end() || own->second.count == 0) return;  // no MOP unit of it to compare with
    slowest = std::max(slowest, own->second.value() * worker_factor(m.worker));
  }
  double estimated = gang_seconds(slowest, k, costs_);
  if (!(estimated > 0)) return;
  gang_ratios_.sum += attempt_s / estimated;
  ++gang_ratios_.count;
}

double GangPlanner::gang_factor() const {
  if (gang_ratios_.count == 0) return 1;
  return std::clamp(gang_ratios_.value(), 0.25, 10.0);
}

double GangPlanner::worker_factor(WorkerId w) const {
  auto it = worker_ratios_.find(w);
  return it == worker_ratios_.end() || it->second.count == 0 ? 1.0 : it->second.value();
}

const GangPlanner::Sweep& GangPlanner::sweep(const MopBook& book) {
  int64_t done = book.units_done();
  if (sweep_.units_done >= 0 && done < sweep_.refresh_at && book.config_count() == sweep_.configs) return sweep_;
  Sweep fresh;
  fresh.units_done = done;
  fresh.configs = book.config_count();
  fresh.workers = static_cast<int32_t>(book.workers().size());
  int64_t remaining_units = 0;
  for (ConfigId c : book.configs()) {
    int64_t remaining = book.remaining_units(c);
    if (remaining == 0) continue;
    remaining_units += remaining;
    std::optional<double> seconds = config_seconds(c);
    double work = static_cast<double>(remaining) * seconds.value_or(0);
    fresh.work_s += work;
    if (work > fresh.longest_s) {
      fresh.second_s = fresh.longest_s;
      fresh.longest_s = work;
      fresh.longest = c;
    } else {
      fresh.second_s = std::max(fresh.second_s, work);
    }
  }
  fresh.refresh_at = done + std::max<int64_t>(1, remaining_units / 200);
  sweep_ = fresh;
  return sweep_;
}

std::optional<double> GangPlanner::config_seconds(ConfigId c) const {
  auto it = config_means_.find(c);
  if (it != config_means_.end() && it->second.count > 0) return it->second.value();
  if (all_units_.count > 0) return all_units_.value();
  return std::nullopt;
}

std::optional<double> GangPlanner::unit_seconds(ConfigId c, WorkerId w) const {
  std::optional<double> mean = config_seconds(c);
  if (!mean) return std::nullopt;
  return *mean * worker_factor(w);
}

std::vector<MopBook::GangMember> GangPlanner::plan(WorkerId w, const Unit& u, const std::vector<WorkerId>& candidates,
                                                   const MopBook& book) {
  if (mode_ == Parallelism::mop) return {};
  const PartitionSet& pending = book.pending_set(u.config);
  std::vector<MopBook::GangMember> members{{w, u}};
  std::vector<PartitionId> taken{u.partition};
  for (WorkerId candidate : candidates) {
    if (static_cast<int32_t>(members.size()) >= costs_.max_gang) break;
    if (candidate == w || book.worker_busy(candidate)) continue;
    for (PartitionId p : book.holdings(candidate)) {
      if (!pending.contains(p) || std::find(taken.begin(), taken.end(), p) != taken.end()) continue;
      members.push_back({candidate, Unit{u.config, p, u.epoch}});
      taken.push_back(p);
      break;
    }
  }
  if (members.size() < 2) return {};
  if (mode_ == Parallelism::data) return members;

  // auto: the cost model, for every gang size the candidates allow, once
  // the allreduce has a measured cost.
  if (!costs_.allreduce_known) return {};
  std::vector<double> member_s;
  for (const MopBook::GangMember& m : members) {
    std::optional<double> s = unit_seconds(u.config, m.worker);
    if (!s) return {};  // nothing measured yet: MOP until there is
    member_s.push_back(*s);
  }
  GangEstimateInput in;
  const Sweep& all = sweep(book);
  in.workers = all.workers;
  in.remaining_units = book.remaining_units(u.config);
  in.mop_unit_s = *config_seconds(u.config);
  double own_work = static_cast<double>(in.remaining_units) * in.mop_unit_s;
  in.other_work_s = std::max(0.0, all.work_s - own_work);
  in.other_chain_s = all.longest == u.config ? all.second_s : all.longest_s;
  in.gang_factor = gang_factor();
  std::optional<GangEstimate> best;
  double slowest = 0;
  for (size_t k = 1; k <= members.size(); ++k) {
    slowest = std::max(slowest, member_s[k - 1]);
    if (k < 2) continue;
    in.unit_s = slowest;
    GangEstimate e = estimate_gang(in, static_cast<int32_t>(k), costs_);
    if (!best || e.gang_finish_s < best->gang_finish_s) best = e;
  }
  last_estimate_ = best;
  if (!best->gang_wins) return {};
  members.resize(static_cast<size_t>(best->members));
  return members;
}

}  // namespace cerebro
