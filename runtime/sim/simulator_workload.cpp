// The simulator's inputs and outputs: options, the synthetic workload, the
// lower bound and the report. The event loop is in simulator.cpp.
#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "runtime/sim/event_queue.hpp"
#include "runtime/sim/simulator.hpp"

namespace cerebro {

namespace {

// The Cerebro paper's 35 CNNs: 360 .. 21,000 MFLOPs per example, mean ~5,900.
constexpr double kMinMflops = 360, kMaxMflops = 21000;
// Exponent of the density x^a on [kMinMflops, kMaxMflops] whose mean is 5,900.
constexpr double kCostExponent = -0.8572638;
// The paper's GPUs (TFLOPS), drawn with equal probability.
constexpr double kPaperTflops[] = {5.6, 11.3, 12.1, 18.7};
constexpr double kEqualTflops = (5.6 + 11.3 + 12.1 + 18.7) / 4;
// Training (forward + backward) costs about three forward passes.
constexpr double kTrainingPasses = 3;

// Streams of the workload and of the run, so adding a draw to one does not
// change the other.
constexpr uint64_t kWorkloadStream = 0x243f6a8885a308d3ULL;
constexpr uint64_t kHyperbandStream = 0xa4093822299f31d0ULL;

double draw_mflops(std::mt19937_64& rng) {
  double k = kCostExponent + 1;
  double u = std::uniform_real_distribution<double>(0, 1)(rng);
  double lo = std::pow(kMinMflops, k), hi = std::pow(kMaxMflops, k);
  return std::clamp(std::pow(lo + u * (hi - lo), 1 / k), kMinMflops, kMaxMflops);
}

double draw_tflops(Heterogeneity h, std::mt19937_64& rng) {
  switch (h) {
    case Heterogeneity::paper: return kPaperTflops[std::uniform_int_distribution<int>(0, 3)(rng)];
    case Heterogeneity::uniform: return std::uniform_real_distribution<double>(5.6, 18.7)(rng);
    case Heterogeneity::none: return kEqualTflops;
  }
  return kEqualTflops;
}

}  // namespace

std::string to_string(Heterogeneity h) {
  switch (h) {
    case Heterogeneity::paper: return "paper";
    case Heterogeneity::uniform: return "uniform";
    case Heterogeneity::none: return "none";
  }
  return "unknown";
}

Result<Heterogeneity> parse_heterogeneity(const std::string& name) {
  for (Heterogeneity h : {Heterogeneity::paper, Heterogeneity::uniform, Heterogeneity::none}) {
    if (name == to_string(h)) return h;
  }
  return Status::invalid_argument(
      fmt::format("--heterogeneity: unknown value '{}' (known: paper, uniform, none)", name));
}

std::string to_string(SimulatedSearch s) {
  switch (s) {
    case SimulatedSearch::fixed: return "fixed";
    case SimulatedSearch::hyperband: return "hyperband";
  }
  return "unknown";
}

Result<SimulatedSearch> parse_simulated_search(const std::string& name) {
  for (SimulatedSearch s : {SimulatedSearch::fixed, SimulatedSearch::hyperband}) {
    if (name == to_string(s)) return s;
  }
  return Status::invalid_argument(fmt::format("--search: unknown value '{}' (known: fixed, hyperband)", name));
}

namespace {

// Hyperband's brackets for max epochs R and factor eta: bracket s (s_max ..
// 0) starts n_s configs at R / eta^s epochs; rung i keeps n_s / eta^i of them
// for R / eta^(s-i) epochs.
struct Bracket {
  int32_t configs = 0;
  std::vector<int32_t> rung_epochs;   // per rung, ascending; the last is R
  std::vector<int32_t> rung_configs;  // per rung: how many train to it
};

std::vector<Bracket> hyperband_brackets(int32_t max_epochs, int32_t eta) {
  int32_t s_max = 0;
  for (int64_t power = eta; power <= max_epochs; power *= eta) ++s_max;
  std::vector<Bracket> out;
  for (int32_t s = s_max; s >= 0; --s) {
    Bracket b;
    double eta_s = std::pow(eta, s);
    b.configs = static_cast<int32_t>(std::ceil((s_max + 1.0) / (s + 1.0) * eta_s));
    for (int32_t i = 0; i <= s; ++i) {
      int64_t divisor = static_cast<int64_t>(std::pow(eta, s - i));
      b.rung_epochs.push_back(std::max<int32_t>(1, static_cast<int32_t>(max_epochs / divisor)));
      b.rung_configs.push_back(std::max<int32_t>(1, static_cast<int32_t>(b.configs / std::pow(eta, i))));
    }
    out.push_back(b);
  }
  return out;
}

}  // namespace

int32_t hyperband_configs(int32_t max_epochs, int32_t eta) {
  int32_t total = 0;
  for (const Bracket& b : hyperband_brackets(max_epochs, eta)) total += b.configs;
  return total;
}

SimulationOptions effective_options(const SimulationOptions& options) {
  SimulationOptions o = options;
  if (o.search == SimulatedSearch::hyperband && o.eta >= 2 && o.epochs >= 1 && o.configs >= 1) {
    int32_t iteration = hyperband_configs(o.epochs, o.eta);
    o.configs = (o.configs + iteration - 1) / iteration * iteration;
  }
  return o;
}

Status validate(const SimulationOptions& o) {
  auto bad = [](const char* flag, const std::string& what) {
    return Status::invalid_argument(fmt::format("{}: {}", flag, what));
  };
  if (o.configs < 1) return bad("--configs", fmt::format("must be >= 1, got {}", o.configs));
  if (o.workers < 1 || static_cast<uint32_t>(o.workers) - 1 > EventQueue::kMaxPayload) {
    return bad("--workers", fmt::format("must be in 1..{}, got {}", EventQueue::kMaxPayload + 1, o.workers));
  }
  if (o.epochs < 1) return bad("--epochs", fmt::format("must be >= 1, got {}", o.epochs));
  if (o.replicas < 1 || o.replicas > o.workers) {
    return bad("--replicas", fmt::format("must be in 1..{} (the workers), got {}", o.workers, o.replicas));
  }
  if (!(o.noise >= 0)) return bad("--noise", fmt::format("must be >= 0, got {}", o.noise));
  if (!(o.failure_rate >= 0 && o.failure_rate < 1)) {
    return bad("--failure-rate", fmt::format("must be in [0, 1), got {}", o.failure_rate));
  }
  if (!(o.downtime_s > 0)) return bad("--downtime", fmt::format("must be > 0, got {}", o.downtime_s));
  if (o.eta < 2) return bad("--eta", fmt::format("must be >= 2, got {}", o.eta));
  if (!(o.allreduce_s >= 0)) return bad("--allreduce-s", fmt::format("must be >= 0, got {}", o.allreduce_s));
  if (!(o.gang_setup_s >= 0)) return bad("--gang-setup-s", fmt::format("must be >= 0, got {}", o.gang_setup_s));
  if (o.batch_size < 1) return bad("--batch-size", fmt::format("must be >= 1, got {}", o.batch_size));
  if (o.parallelism != Parallelism::mop && (o.max_gang < 2 || o.max_gang > o.workers)) {
    return bad("--max-gang", fmt::format("a gang needs 2 .. {} workers (one per partition it covers, "
                                         "each on a worker holding it), got {}",
                                         o.workers, o.max_gang));
  }
  if (o.examples < o.workers) {
    return bad("--examples",
               fmt::format("must be >= the workers ({}) so no partition is empty, got {}", o.workers, o.examples));
  }
  return Status::ok_status();
}

double Workload::unit_seconds(ConfigId c, WorkerId w) const {
  return config_mflops[c] * kTrainingPasses * static_cast<double>(examples_per_partition) / (worker_tflops[w] * 1e6);
}

Workload make_workload(const SimulationOptions& o) {
  std::mt19937_64 rng(o.seed ^ kWorkloadStream);
  Workload wl;
  wl.epochs = o.epochs;
  wl.examples_per_partition = o.examples / o.workers;
  for (int32_t c = 0; c < o.configs; ++c) wl.config_mflops.push_back(draw_mflops(rng));
  for (int32_t w = 0; w < o.workers; ++w) wl.worker_tflops.push_back(draw_tflops(o.heterogeneity, rng));
  // Partition p lives on worker p (the paper's layout) plus replicas - 1 others.
  wl.holders.resize(o.workers);
  wl.holdings.resize(o.workers);
  std::uniform_int_distribution<WorkerId> any_worker(0, o.workers - 1);
  for (PartitionId p = 0; p < o.workers; ++p) {
    std::vector<WorkerId>& holders = wl.holders[p];
    holders.push_back(p);
    while (static_cast<int32_t>(holders.size()) < o.replicas) {
      WorkerId w = any_worker(rng);
      if (std::find(holders.begin(), holders.end(), w) == holders.end()) holders.push_back(w);
    }
    std::sort(holders.begin(), holders.end());
    for (WorkerId w : holders) wl.holdings[w].push_back(p);
  }
  if (o.search == SimulatedSearch::hyperband) {
    // Drawn from its own stream, after the rest: the fixed workload of a seed stays as it was.
    std::mt19937_64 quality_rng(o.seed ^ kHyperbandStream);
    std::vector<Bracket> brackets = hyperband_brackets(o.epochs, o.eta);
    ConfigId next = 0;
    while (next < o.configs) {
      for (const Bracket& b : brackets) {
        auto bracket = static_cast<int32_t>(wl.bracket_rungs.size());
        wl.bracket_rungs.emplace_back(b.rung_epochs.begin(), b.rung_epochs.end() - 1);
        // A random order stands for the configs' quality: the first ones are promoted.
        std::vector<int32_t> rank(b.configs);
        for (int32_t i = 0; i < b.configs; ++i) rank[i] = i;
        std::shuffle(rank.begin(), rank.end(), quality_rng);
        for (int32_t i = 0; i < b.configs; ++i, ++next) {
          size_t rung = 0;
          while (rung + 1 < b.rung_configs.size() && rank[i] < b.rung_configs[rung + 1]) ++rung;
          wl.config_epochs.push_back(b.rung_epochs[rung]);
          wl.config_bracket.push_back(bracket);
        }
      }
    }
  }
  return wl;
}

double LowerBound::seconds_with_gangs(int32_t max_gang) const {
  return std::max({total_work_s, longest_chain_s / std::max(1, max_gang), worker_load_s});
}

double LowerBound::seconds() const { return std::max({total_work_s, longest_chain_s, worker_load_s}); }

LowerBound lower_bound(const Workload& wl) {
  LowerBound lb;
  const double epochs = wl.epochs;
  const int32_t partitions = wl.num_partitions();
  double total_speed = 0;
  for (double s : wl.worker_tflops) total_speed += s;
  // Config costs weighted by the epochs each trains (all `epochs` when fixed).
  double total_mflops = 0, heaviest = 0;
  for (size_t c = 0; c < wl.config_mflops.size(); ++c) {
    double weighted = wl.config_mflops[c] * wl.epochs_of(static_cast<ConfigId>(c)) / epochs;
    total_mflops += weighted;
    heaviest = std::max(heaviest, weighted);
  }
  // unit_seconds is proportional to mflops / tflops: work out the sums once.
  auto seconds = [&](double mflops, double tflops) {
    return mflops * kTrainingPasses * static_cast<double>(wl.examples_per_partition) / (tflops * 1e6);
  };
  lb.total_work_s = seconds(total_mflops, total_speed) * partitions * epochs;

  double inverse_fastest = 0;  // sum over partitions of 1 / its fastest holder's speed
  for (const auto& holders : wl.holders) {
    double fastest = 0;
    for (WorkerId w : holders) fastest = std::max(fastest, wl.worker_tflops[w]);
    inverse_fastest += 1 / fastest;
  }
  lb.longest_chain_s = seconds(heaviest, 1) * inverse_fastest * epochs;

  for (size_t w = 0; w < wl.holdings.size(); ++w) {
    int64_t exclusive = 0;
    for (PartitionId p : wl.holdings[w]) exclusive += wl.holders[p].size() == 1 ? 1 : 0;
    lb.worker_load_s = std::max(lb.worker_load_s,
                                seconds(total_mflops, wl.worker_tflops[w]) * static_cast<double>(exclusive) * epochs);
  }
  return lb;
}

nlohmann::json SimulationReport::to_json() const {
  return nlohmann::json{
      {"policy", policy},
      {"configs", options.configs},
      {"workers", options.workers},
      {"epochs", options.epochs},
      {"seed", options.seed},
      {"heterogeneity", to_string(options.heterogeneity)},
      {"replicas", options.replicas},
      {"noise", options.noise},
      {"failure_rate", options.failure_rate},
      {"downtime_s", options.downtime_s},
      {"examples", options.examples},
      {"priors", options.priors},
      {"search", to_string(options.search)},
      {"parallelism", to_string(options.parallelism)},
      {"allreduce_s", options.allreduce_s},
      {"max_gang", options.max_gang},
      {"gangs", gangs},
      {"gang_units", gang_units},
      {"lower_bound_with_gangs", bound.seconds_with_gangs(options.max_gang)},
      {"ratio_gang_bound", ratio_gang_bound},
      {"units", units},
      {"failed_attempts", failed_attempts},
      {"decisions", decisions},
      {"makespan", makespan_s},
      {"lower_bound", bound.seconds()},
      {"lower_bound_parts",
       {{"total_work", bound.total_work_s},
        {"longest_chain", bound.longest_chain_s},
        {"worker_load", bound.worker_load_s}}},
      {"ratio", ratio},
      {"utilization", utilization},
      {"decision_latency_p50_us", decision_latency_p50_us},
      {"decision_latency_p99_us", decision_latency_p99_us},
      {"decision_latency_every", decision_latency_every},
      {"wall_s", wall_s},
  };
}

}  // namespace cerebro
