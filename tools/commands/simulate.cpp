#include "tools/commands/simulate.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "runtime/run/run_recovery.hpp"
#include "runtime/scheduling/cost_prior.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "runtime/sim/from_run.hpp"
#include "runtime/store/state_store.hpp"
#include "tools/command_registry.hpp"

namespace cerebro {

std::unique_ptr<SimulateCommand> add_simulate_options(CLI::App& simulate) {
  auto cmd = std::make_unique<SimulateCommand>();
  SimulationOptions& o = cmd->options;
  CLI::App* sub = &simulate;
  cmd->command = sub;
  sub->add_option("--configs", o.configs, "Configs to train")->capture_default_str();
  sub->add_option("--workers", o.workers, "Workers; one partition each (partitions = workers)")->capture_default_str();
  sub->add_option("--epochs", o.epochs, "Epochs per config")->capture_default_str();
  sub->add_option("--seed", o.seed, "Seeds the workload, the run and the policy")->capture_default_str();
  std::string policies;
  for (const SchedulerInfo& info : scheduler_registry()) {
    policies += fmt::format("{} ({}), ", info.name, info.description);
  }
  sub->add_option("--policy", cmd->policy, "Scheduling policy: " + policies + "or all (each on the same workload)")
      ->capture_default_str();
  sub->add_option("--heterogeneity", cmd->heterogeneity,
                  "Worker speeds: paper (5.6, 11.3, 12.1 or 18.7 TFLOPS), uniform (in [5.6, 18.7]) or none")
      ->capture_default_str();
  sub->add_option("--replicas", o.replicas, "Workers holding each partition")->capture_default_str();
  sub->add_option("--noise", o.noise, "Each unit runs 1 + U(0, noise) times its nominal time")->capture_default_str();
  sub->add_option("--failure-rate", o.failure_rate,
                  "Probability that a unit's worker fails during it (the unit is requeued)")
      ->capture_default_str();
  sub->add_option("--downtime", o.downtime_s, "Seconds a failed worker stays away")->capture_default_str();
  sub->add_option("--examples", o.examples, "Training examples, split evenly over the partitions")
      ->capture_default_str();
  sub->add_flag("--priors", o.priors,
                "Give the policy each config's cost as a prior before the run (as a real run's probe does)");
  sub->add_option("--from-run", cmd->from_run,
                  "Simulate this run directory's workload (its unit log: each config's mean unit span, its workers "
                  "and partitions, its cost priors) with its scheduler (or --policy) and print the simulated "
                  "against the real makespan; --configs, --workers, --epochs, --examples, --heterogeneity, "
                  "--replicas and --priors do not apply");
  // Searches with few configs at the end, and data-parallel gangs.
  sub->add_option("--search", cmd->search,
                  "fixed (every config all epochs) or hyperband (brackets with rung barriers, max epochs = "
                  "--epochs; --configs rounds up to whole Hyperband iterations)")
      ->capture_default_str();
  sub->add_option("--eta", o.eta, "Hyperband's reduction factor")->capture_default_str();
  sub->add_option("--parallelism", cmd->parallelism,
                  "mop (units alone), auto (data-parallel gangs when the cost model says sooner), data (gangs "
                  "whenever idle holders can form one), or compare (mop and auto on the same workload)")
      ->capture_default_str();
  sub->add_option("--allreduce-s", o.allreduce_s, "Seconds of one gradient allreduce between 2 ranks")
      ->capture_default_str();
  sub->add_option("--gang-setup-s", o.gang_setup_s, "Seconds to form a gang (rendezvous), per attempt")
      ->capture_default_str();
  sub->add_option("--batch-size", o.batch_size, "A config's batch size (allreduces per unit = examples / this)")
      ->capture_default_str();
  sub->add_option("--max-gang", o.max_gang, "Most workers in one gang")->capture_default_str();
  sub->add_flag("--json", cmd->json,
                "Print JSON (one object, or an array with --policy all) with makespan, lower_bound, ratio, "
                "utilization, decision_latency_p50_us, decision_latency_p99_us");
  return cmd;
}

namespace {

void print_text(const SimulationReport& r, std::ostream& out) {
  const SimulationOptions& o = r.options;
  out << fmt::format("policy {}: {} configs x {} workers x {} epochs, heterogeneity {}, replicas {}, seed {}\n",
                     r.policy, o.configs, o.workers, o.epochs, to_string(o.heterogeneity), o.replicas, o.seed);
  out << fmt::format("  units          {} ({} attempts lost to worker failures)\n", r.units, r.failed_attempts);
  out << fmt::format("  makespan       {:.0f} s\n", r.makespan_s);
  out << fmt::format("  lower bound    {:.0f} s (total work {:.0f} s, longest chain {:.0f} s, worker load {:.0f} s)\n",
                     r.bound.seconds(), r.bound.total_work_s, r.bound.longest_chain_s, r.bound.worker_load_s);
  out << fmt::format("  ratio          {:.4f}\n", r.ratio);
  if (o.parallelism != Parallelism::mop || o.search != SimulatedSearch::fixed) {
    out << fmt::format(
        "  search {}, parallelism {}: {} gangs covered {} units; makespan / bound with gangs of "
        "<= {}: {:.4f}\n",
        to_string(o.search), to_string(o.parallelism), r.gangs, r.gang_units, o.max_gang, r.ratio_gang_bound);
  }
  out << fmt::format("  utilization    {:.1f}%\n", 100 * r.utilization);
  out << fmt::format("  decisions      {}: latency p50 {:.2f} us, p99 {:.2f} us{}\n", r.decisions,
                     r.decision_latency_p50_us, r.decision_latency_p99_us,
                     r.decision_latency_every > 1
                         ? fmt::format(" (every {}th decision timed)", r.decision_latency_every)
                         : std::string());
  out << fmt::format("  simulated in   {:.2f} s\n", r.wall_s);
}

}  // namespace

// --from-run: the run's workload, simulated with its own scheduler unless
// --policy was given.
static int simulate_from_run(const SimulateCommand& cmd, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message) {
    err << "error: " << message << "\n";
    return 1;
  };
  const std::string& dir = cmd.from_run;
  std::vector<UnitLogEntry> log;
  CostPriors priors;
  std::string policy = cmd.policy;
  {
    auto store = StateStore::open((std::filesystem::path(dir) / "state").string(), false);
    if (!store.ok()) return fail(fmt::format("--from-run {}: {} (is this a run directory?)", dir, store.error()));
    log = (*store)->unit_log();
    if (auto text = (*store)->get_meta("cost_priors")) {
      auto parsed = CostPriors::from_json(nlohmann::json::parse(*text, nullptr, false));
      if (!parsed.ok()) return fail(fmt::format("--from-run {}: {}", dir, parsed.error()));
      priors = std::move(parsed).value();
    }
    bool policy_given = cmd.command && cmd.command->count("--policy") > 0;
    if (!policy_given) {
      auto spec = spec_of_run(**store, dir);
      if (!spec.ok()) return fail(fmt::format("--from-run {}: {}; name the policy with --policy", dir, spec.error()));
      policy = to_string(spec->cluster.scheduler);
    }
  }
  if (policy == "all") return fail("--from-run takes one --policy, not all");
  auto run = workload_from_log(log, priors, cmd.options.seed);
  if (!run.ok()) return fail(fmt::format("--from-run {}: {}", dir, run.error()));
  run->options.noise = cmd.options.noise;
  auto compared = simulate_run(*run, policy);
  if (!compared.ok()) return fail(compared.error());
  const RunComparison& c = *compared;
  if (cmd.json) {
    nlohmann::json j{{"run_dir", dir},
                     {"policy", policy},
                     {"configs", run->options.configs},
                     {"workers", run->options.workers},
                     {"partitions", run->workload.num_partitions()},
                     {"epochs", run->options.epochs},
                     {"priors", run->priors.all().size()},
                     {"real_makespan", c.real_makespan_s},
                     {"simulated_makespan", c.simulated.makespan_s},
                     {"simulated_over_real", c.ratio},
                     {"lower_bound", c.simulated.bound.seconds()}};
    out << j.dump(2) << "\n";
    return 0;
  }
  out << fmt::format("run {}: {} configs x {} partitions x {} epochs on {} workers, policy {}, {} cost priors\n", dir,
                     run->options.configs, run->workload.num_partitions(), run->options.epochs, run->options.workers,
                     policy, run->priors.all().size());
  out << fmt::format("  real makespan       {:.1f} s (first dispatch to last commit)\n", c.real_makespan_s);
  out << fmt::format("  simulated makespan  {:.1f} s (lower bound {:.1f} s)\n", c.simulated.makespan_s,
                     c.simulated.bound.seconds());
  out << fmt::format("  simulated / real    {:.3f}\n", c.ratio);
  return 0;
}

int run_simulate_command(const SimulateCommand& cmd, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message) {
    err << "error: " << message << "\n";
    return 1;
  };
  if (!cmd.from_run.empty()) return simulate_from_run(cmd, out, err);
  SimulationOptions options = cmd.options;
  Result<Heterogeneity> heterogeneity = parse_heterogeneity(cmd.heterogeneity);
  if (!heterogeneity.ok()) return fail(heterogeneity.error());
  options.heterogeneity = *heterogeneity;
  Result<SimulatedSearch> search = parse_simulated_search(cmd.search);
  if (!search.ok()) return fail(search.error());
  options.search = *search;
  // "compare" is a CLI word for mop then auto on the same workload, not a mode.
  std::vector<Parallelism> modes;
  if (cmd.parallelism == "compare") {
    modes = {Parallelism::mop, Parallelism::automatic};
  } else if (std::optional<Parallelism> mode = parse_parallelism(cmd.parallelism)) {
    modes = {*mode};
  } else {
    return fail(fmt::format("--parallelism: unknown value '{}' (known: {}, compare)", cmd.parallelism,
                            fmt::join(parallelism_names(), ", ")));
  }
  std::vector<std::string> policies{cmd.policy};
  // "all" is a CLI word for every policy, not a policy: the policies stay names that simulate() parses.
  if (cmd.policy == "all") policies = policy_names();
  nlohmann::json reports = nlohmann::json::array();
  for (const std::string& policy : policies) {
    for (Parallelism mode : modes) {
      options.parallelism = mode;
      Result<SimulationReport> report = simulate(options, policy);
      if (!report.ok()) return fail(report.error());
      if (cmd.json) {
        reports.push_back(report->to_json());
      } else {
        print_text(*report, out);
      }
    }
  }
  if (cmd.json) out << (reports.size() == 1 ? reports[0] : reports).dump(2) << "\n";
  return 0;
}

namespace {

cli::CommandAction setup(CLI::App& simulate) {
  std::shared_ptr<SimulateCommand> command = add_simulate_options(simulate);
  return [command] { return run_simulate_command(*command); };
}

const cli::CommandRegistrar registrar{
    {"simulate", "Simulate MOP scheduling policies on a synthetic cluster: makespan against a lower bound", 90, setup}};

}  // namespace

}  // namespace cerebro
