#include "tools/bench_modes.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "actors/experiment_runner.hpp"
#include "actors/system_config.hpp"
#include "runtime/spec/spec.hpp"
#include "tools/cluster_client.hpp"

namespace fs = std::filesystem;

namespace cerebro::bench {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

UnitOverhead unit_overhead(const nlohmann::json& summary) {
  UnitOverhead o;
  o.units = summary.at("units").get<int64_t>();
  o.unit_compute_s = summary.at("unit_compute_s").get<double>();
  double span = summary.at("unit_span_s").get<double>();
  o.hop_overhead_fraction = summary.at("hop_overhead_fraction").get<double>();
  o.span_overhead_fraction = summary.value("span_overhead_fraction", o.hop_overhead_fraction);
  if (o.units > 0) {
    o.compute_ms_per_unit = 1e3 * o.unit_compute_s / static_cast<double>(o.units);
    o.overhead_ms_per_unit = 1e3 * std::max(0.0, span - o.unit_compute_s) / static_cast<double>(o.units);
  }
  return o;
}

UnitPhases unit_phases(const std::vector<UnitLogEntry>& log, const nlohmann::json& summary) {
  UnitPhases p;
  std::map<WorkerId, std::vector<const UnitLogEntry*>> by_worker;
  std::vector<double> rests;
  std::vector<std::vector<double>> by_epoch;
  for (const auto& e : log) {
    if (e.rolled_back || e.gang > 0) continue;
    ++p.units;
    double compute = e.train_s + e.validate_s, occupied = std::max(0.0, e.worker_end_s() - e.start_s);
    p.compute_ms += compute;
    p.restore_ms += e.restore_s;
    p.save_ms += e.save_s;
    p.occupied_fixed_ms += occupied - compute;
    p.rest_ms += occupied - compute - e.restore_s - e.save_s;
    rests.push_back(1e3 * (occupied - compute - e.restore_s - e.save_s));
    if (e.epoch >= 0) {
      auto epoch = static_cast<size_t>(e.epoch);
      if (by_epoch.size() <= epoch) by_epoch.resize(epoch + 1);
      by_epoch[epoch].push_back(rests.back());
    }
    p.commit_ms += std::max(0.0, e.end_s - e.worker_end_s());
    by_worker[e.worker].push_back(&e);
  }
  for (auto& [worker, units] : by_worker) {
    std::sort(units.begin(), units.end(), [](auto* a, auto* b) { return a->start_s < b->start_s; });
    for (size_t i = 1; i < units.size(); ++i)
      p.idle_between_ms += std::max(0.0, units[i]->start_s - units[i - 1]->worker_end_s());
  }
  if (p.units > 0) {
    const double per_unit_ms = 1e3 / static_cast<double>(p.units);
    for (double* v :
         {&p.compute_ms, &p.restore_ms, &p.save_ms, &p.rest_ms, &p.occupied_fixed_ms, &p.commit_ms, &p.idle_between_ms})
      *v *= per_unit_ms;
  }
  {
    // Each config's first unit (by start) starts from its initial state in the store.
    std::map<ConfigId, std::pair<double, double>> first;  // config -> (start_s, rest)
    double sum = 0;
    for (size_t i = 0, k = 0; i < log.size(); ++i) {
      const auto& e = log[i];
      if (e.rolled_back || e.gang > 0) continue;
      double rest = rests[k++];
      sum += rest;
      auto it = first.find(e.config);
      if (it == first.end() || e.start_s < it->second.first) first[e.config] = {e.start_s, rest};
    }
    double first_sum = 0;
    for (const auto& [config, f] : first) first_sum += f.second;
    if (!first.empty()) p.rest_first_units_ms = first_sum / static_cast<double>(first.size());
    if (rests.size() > first.size())
      p.rest_later_units_ms = (sum - first_sum) / static_cast<double>(rests.size() - first.size());
  }
  for (const auto& epoch : by_epoch) {
    double sum = 0;
    for (double v : epoch) sum += v;
    p.rest_by_epoch_ms.push_back(epoch.empty() ? 0 : sum / static_cast<double>(epoch.size()));
  }
  p.rest_p50_ms = percentile(rests, 0.5);
  p.rest_p90_ms = percentile(rests, 0.9);
  p.wall_s = summary.value("wall_s", 0.0);
  p.makespan_over_compute = summary.value("makespan_over_compute", 0.0);
  return p;
}

Result<UnitPhases> unit_phases_of(const std::string& run_dir) {
  nlohmann::json summary;
  try {
    std::ifstream in(fs::path(run_dir) / "summary.json");
    summary = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("{}: cannot read summary.json: {}", run_dir, e.what()));
  }
  auto store = StateStore::open_read_only((fs::path(run_dir) / "state").string());
  if (!store.ok()) return store.status();
  return unit_phases((*store)->unit_log(), summary);
}

namespace {

nlohmann::json phases_json(const UnitPhases& p) {
  return {{"units", p.units},
          {"compute_ms_per_unit", p.compute_ms},
          {"restore_ms_per_unit", p.restore_ms},
          {"save_ms_per_unit", p.save_ms},
          {"rest_of_worker_path_ms_per_unit", p.rest_ms},
          {"rest_of_worker_path_ms_p50", p.rest_p50_ms},
          {"rest_of_worker_path_ms_p90", p.rest_p90_ms},
          {"rest_of_worker_path_ms_by_epoch", p.rest_by_epoch_ms},
          {"rest_of_worker_path_ms_first_units", p.rest_first_units_ms},
          {"rest_of_worker_path_ms_later_units", p.rest_later_units_ms},
          {"fixed_cost_workers_time_ms_per_unit", p.occupied_fixed_ms},
          {"commit_after_result_ms_per_unit", p.commit_ms},
          {"idle_between_units_ms_per_unit", p.idle_between_ms},
          {"wall_s", p.wall_s},
          {"makespan_over_compute", p.makespan_over_compute}};
}

std::string phases_line(const UnitPhases& p) {
  return fmt::format(
      "fixed cost over the workers' time {:.2f} ms per unit (restore {:.2f}, save {:.2f}, state read "
      "+ messages {:.2f}, p50 {:.2f}, p90 {:.2f}, by epoch {:.2f}, configs' first units {:.2f}, later {:.2f}); idle "
      "between a result and the next dispatch {:.2f} ms; commit after the "
      "result {:.2f} ms; makespan_over_compute {:.3f}",
      p.occupied_fixed_ms, p.restore_ms, p.save_ms, p.rest_ms, p.rest_p50_ms, p.rest_p90_ms,
      fmt::join(p.rest_by_epoch_ms, " / "), p.rest_first_units_ms, p.rest_later_units_ms, p.idle_between_ms,
      p.commit_ms, p.makespan_over_compute);
}

}  // namespace

int print_phases(const std::vector<std::string>& run_dirs) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& dir : run_dirs) {
    auto p = unit_phases_of(dir);
    if (!p.ok()) return fmt::print(stderr, "error: {}\n", p.error()), 1;
    fmt::print(stderr, "{}: {} units of {:.1f} ms: {}\n", dir, p->units, p->compute_ms, phases_line(*p));
    auto j = phases_json(*p);
    j["run_dir"] = dir;
    runs.push_back(j);
  }
  fmt::print("{}\n", runs.dump(2));
  return 0;
}

std::string small_units_spec(const std::string& data_dir) {
  return fmt::format(R"(
[experiment]
name = "small-units"
epochs = 3
seed = 11
search = "random"
samples = 16
[data]
source = "idx"
path = "{}"
validation_fraction = 0.1
limit = 20000
[cluster]
workers = 2
threads_per_worker = 1
[space]
model = ["mlp"]
hidden = [[32], [64], [64, 32], [128]]
lr = {{ dist = "loguniform", low = 1e-4, high = 1e-2 }}
batch_size = [128, 256]
optimizer = ["adam"]
)",
                     data_dir);
}

// The issue's parity workload: 8 configs x 2 partitions x 1 epoch on 24,000
// examples, mlp and cnn (states of 0.3 to 3 MB).
std::string grid_bench_spec(const std::string& name, int epochs, const std::string& data_dir, int64_t limit,
                            int workers) {
  return fmt::format(R"(
[experiment]
name = "{}"
epochs = {}
seed = 42
[data]
source = "idx"
path = "{}"
validation_fraction = 0.1
limit = {}
[cluster]
workers = {}
threads_per_worker = 1
[space]
model = ["mlp", "cnn"]
lr = [1e-3, 3e-4]
batch_size = [64, 256]
optimizer = ["adam"]
)",
                     name, epochs, data_dir, limit, workers);
}

std::string parity_spec(const std::string& data_dir) { return grid_bench_spec("parity", 1, data_dir, 24000, 2); }

Result<std::unique_ptr<BenchCluster>> BenchCluster::start(const std::string& dir, int agents) {
  std::unique_ptr<BenchCluster> c(new BenchCluster());
  c->dir_ = dir;
  fs::create_directories(dir);
  c->token_path_ = (fs::path(dir) / "token").string();
  std::ofstream(c->token_path_) << "bench-token-" << std::chrono::steady_clock::now().time_since_epoch().count()
                                << "\n";
  fs::permissions(c->token_path_, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto self_exe = fs::read_symlink("/proc/self/exe").string();
  c->port_ = std::to_string(e2e::free_port());
  c->coordinator_ = std::make_unique<e2e::ChildProcess>(
      std::vector<std::string>{self_exe, "coordinator", "--listen", "127.0.0.1:" + c->port_, "--state",
                               (fs::path(dir) / "state").string(), "--token-file", c->token_path_},
      (fs::path(dir) / "coordinator.log").string());
  for (int a = 1; a <= agents; ++a)
    c->agents_.push_back(std::make_unique<e2e::ChildProcess>(
        std::vector<std::string>{self_exe, "agent", "--join", "127.0.0.1:" + c->port_, "--token-file", c->token_path_,
                                 "--workers", "1", "--data-dir",
                                 (fs::path(dir) / ("agent" + std::to_string(a))).string(), "--name",
                                 "bench" + std::to_string(a)},
        (fs::path(dir) / ("agent" + std::to_string(a) + ".log")).string()));
  for (int a = 1; a <= agents; ++a)
    if (!c->coordinator_->wait_for_log("agent bench" + std::to_string(a) + " joined", 60))
      return Status::unavailable("the bench agents did not join: see " + (fs::path(dir) / "coordinator.log").string());
  return c;
}

Result<nlohmann::json> BenchCluster::run(const std::string& spec_path, const std::string& run_dir) const {
  ClientOptions client;
  client.cluster = "127.0.0.1:" + port_;
  client.token_file = token_path_;
  if (run_on_cluster(client, spec_path, run_dir) != 0) return Status::internal("the cluster run failed");
  std::ifstream in(fs::path(run_dir) / "summary.json");
  return nlohmann::json::parse(in);
}

Result<std::vector<double>> BenchCluster::hop_ms(int samples, size_t bytes) const {
  cerebro_system_config config(system_role::client);
  caf::actor_system system(config);
  auto gateway =
      system.middleman().remote_actor<coordinator_actor>("127.0.0.1", static_cast<uint16_t>(std::stoi(port_)));
  if (!gateway) return Status::unavailable("cannot reach the bench coordinator: " + system.render(gateway.error()));
  caf::scoped_actor self(system);
  std::string token_text;
  std::getline(std::ifstream(token_path_), token_text);
  std::string state(bytes, '\x5a');
  std::vector<double> ms;
  std::string failure;
  for (int i = 0; i <= samples && failure.empty(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    self->request(*gateway, std::chrono::seconds(30), hop_atom::value, token_text, state)
        .receive([](int64_t) {}, [&](const caf::error& e) { failure = system.render(e); });
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!failure.empty()) return Status::internal("a hop failed: " + failure);
  return ms;
}

namespace {

Result<nlohmann::json> run_embedded_quietly(const std::string& spec_text, const std::string& out_dir) {
  auto spec = parse_spec_string(spec_text, "", "bench spec");
  if (!spec.ok()) return spec.status();
  RunOptions run;
  run.spec = *spec;
  run.out_dir = out_dir;
  return run_embedded(run, {[](const std::string&) {}, [](const progress_update&) {}});
}

std::string write_spec(const std::string& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  auto path = (fs::path(dir) / name).string();
  std::ofstream(path) << text;
  return path;
}

nlohmann::json overhead_json(const UnitOverhead& o) {
  return {{"units", o.units},
          {"unit_compute_s", o.unit_compute_s},
          {"compute_ms_per_unit", o.compute_ms_per_unit},
          {"overhead_ms_per_unit", o.overhead_ms_per_unit},
          {"hop_overhead_fraction", o.hop_overhead_fraction},
          {"span_overhead_fraction", o.span_overhead_fraction}};
}

void emit(const ModeOptions& o, const nlohmann::json& report) {
  auto text = report.dump(2) + "\n";
  std::ofstream(fs::path(o.out_dir) / "bench.json") << text;
  if (!o.json_path.empty()) std::ofstream(o.json_path) << text;
  fmt::print("{}", text);
}

}  // namespace

int run_small_units(const ModeOptions& o) {
  auto spec_text = small_units_spec(o.data_dir);
  auto spec_path = write_spec(o.out_dir, "small_units.toml", spec_text);
  std::unique_ptr<BenchCluster> cluster;
  if (o.cluster) {
    auto started = BenchCluster::start((fs::path(o.out_dir) / "cluster").string(), 2);
    if (!started.ok()) return fmt::print(stderr, "error: {}\n", started.error()), 1;
    cluster = std::move(started).value();
  }
  nlohmann::json runs = nlohmann::json::array();
  std::vector<double> embedded_ms, cluster_ms, workers_ms, makespans;
  for (int i = 1; i <= o.runs; ++i) {
    auto dir = (fs::path(o.out_dir) / fmt::format("embedded-{}", i)).string();
    auto summary = run_embedded_quietly(spec_text, dir);
    if (!summary.ok()) return fmt::print(stderr, "error: {}\n", summary.error()), 1;
    auto e = unit_overhead(*summary);
    embedded_ms.push_back(e.overhead_ms_per_unit);
    fmt::print(stderr, "small units, embedded run {}: {} units of {:.1f} ms, fixed cost {:.2f} ms per unit\n", i,
               e.units, e.compute_ms_per_unit, e.overhead_ms_per_unit);
    nlohmann::json run{{"embedded", overhead_json(e)}};
    if (auto p = unit_phases_of(dir); p.ok()) {
      fmt::print(stderr, "small units, embedded run {}: {}\n", i, phases_line(*p));
      run["embedded"]["phases"] = phases_json(*p);
      workers_ms.push_back(p->occupied_fixed_ms);
      makespans.push_back(p->makespan_over_compute);
    } else {
      fmt::print(stderr, "small units, embedded run {}: no phases: {}\n", i, p.error());
    }
    if (cluster) {
      auto cs = cluster->run(spec_path, (fs::path(o.out_dir) / fmt::format("cluster-{}", i)).string());
      if (!cs.ok()) return fmt::print(stderr, "error: {}\n", cs.error()), 1;
      auto c = unit_overhead(*cs);
      cluster_ms.push_back(c.overhead_ms_per_unit);
      fmt::print(stderr, "small units, cluster run {}: {} units of {:.1f} ms, fixed cost {:.2f} ms per unit\n", i,
                 c.units, c.compute_ms_per_unit, c.overhead_ms_per_unit);
      run["cluster"] = overhead_json(c);
    }
    runs.push_back(run);
  }
  nlohmann::json report{{"workload", "16 random small mlp configs x 2 partitions x 3 epochs, 20,000 examples"},
                        {"runs", runs},
                        {"overhead_ms_per_unit_median", median(embedded_ms)},
                        {"fixed_cost_workers_time_ms_per_unit_median", median(workers_ms)},
                        {"makespan_over_compute_median", median(makespans)}};
  if (cluster) report["cluster_overhead_ms_per_unit_median"] = median(cluster_ms);
  emit(o, report);
  fmt::print(
      "small units: per-unit fixed cost over the workers' time (dispatch to result, minus training and "
      "validation) median {:.2f} ms (goal <= 5 ms); over the durable span (dispatch to durable ack) median "
      "{:.2f} ms; makespan_over_compute median {:.3f}; over {} embedded runs{}\n",
      median(workers_ms), median(embedded_ms), median(makespans), o.runs,
      cluster ? fmt::format(", {:.2f} ms on agent processes", median(cluster_ms)) : std::string());
  return 0;
}

int run_parity(const ModeOptions& o) {
  auto spec_text = parity_spec(o.data_dir);
  auto spec_path = write_spec(o.out_dir, "parity.toml", spec_text);
  auto started = BenchCluster::start((fs::path(o.out_dir) / "cluster").string(), 2);
  if (!started.ok()) return fmt::print(stderr, "error: {}\n", started.error()), 1;
  auto cluster = std::move(started).value();
  nlohmann::json pairs = nlohmann::json::array();
  std::vector<double> ratios, cluster_hop, embedded_hop, cluster_span;
  for (int i = 1; i <= o.runs; ++i) {
    // Alternate which side goes first, so a drift of the VM's speed during
    // the invocation does not favour one side.
    bool embedded_first = i % 2 == 1;
    Result<nlohmann::json> embedded = Status::internal("not run"), on_cluster = Status::internal("not run");
    auto run_embedded_side = [&] {
      embedded = run_embedded_quietly(spec_text, (fs::path(o.out_dir) / fmt::format("embedded-{}", i)).string());
    };
    auto run_cluster_side = [&] {
      on_cluster = cluster->run(spec_path, (fs::path(o.out_dir) / fmt::format("cluster-{}", i)).string());
    };
    if (embedded_first)
      run_embedded_side(), run_cluster_side();
    else
      run_cluster_side(), run_embedded_side();
    if (!embedded.ok()) return fmt::print(stderr, "error: {}\n", embedded.error()), 1;
    if (!on_cluster.ok()) return fmt::print(stderr, "error: {}\n", on_cluster.error()), 1;
    auto e = unit_overhead(*embedded), c = unit_overhead(*on_cluster);
    double ratio = e.unit_compute_s > 0 ? c.unit_compute_s / e.unit_compute_s : 0;
    ratios.push_back(ratio);
    cluster_hop.push_back(c.hop_overhead_fraction);
    embedded_hop.push_back(e.hop_overhead_fraction);
    cluster_span.push_back(c.span_overhead_fraction);
    fmt::print(stderr,
               "pair {} ({} first): unit compute embedded {:.2f} s, agents {:.2f} s (ratio {:.3f}); hop "
               "overhead {:.2f}% / {:.2f}% (over the durable spans {:.2f}% / {:.2f}%)\n",
               i, embedded_first ? "embedded" : "agents", e.unit_compute_s, c.unit_compute_s, ratio,
               100 * e.hop_overhead_fraction, 100 * c.hop_overhead_fraction, 100 * e.span_overhead_fraction,
               100 * c.span_overhead_fraction);
    pairs.push_back({{"order", embedded_first ? "embedded,cluster" : "cluster,embedded"},
                     {"embedded", overhead_json(e)},
                     {"cluster", overhead_json(c)},
                     {"compute_ratio_cluster_over_embedded", ratio}});
  }
  auto hops = cluster->hop_ms(o.hop_samples, 10 * 1000 * 1000);
  if (!hops.ok()) return fmt::print(stderr, "error: {}\n", hops.error()), 1;
  nlohmann::json report{{"workload", "grid {mlp,cnn} x lr {1e-3,3e-4} x batch {64,256}, 1 epoch, 24,000 examples"},
                        {"pairs", pairs},
                        {"compute_ratio_median", median(ratios)},
                        {"cluster_hop_overhead_median", median(cluster_hop)},
                        {"embedded_hop_overhead_median", median(embedded_hop)},
                        {"cluster_span_overhead_median", median(cluster_span)},
                        {"hop_10MB_samples", hops->size()},
                        {"hop_10MB_ms_p50", percentile(*hops, 0.5)},
                        {"hop_10MB_ms_p99", percentile(*hops, 0.99)}};
  emit(o, report);
  fmt::print(
      "parity over {} interleaved pairs: agents/embedded unit compute median {:.3f} (goal within 3%), "
      "cluster hop overhead median {:.2f}% (goal <= 1%), 10 MB hop through the guard p50 {:.1f} ms p99 {:.1f} "
      "ms over {} hops (goal 15 / 40)\n",
      o.runs, median(ratios), 100 * median(cluster_hop), percentile(*hops, 0.5), percentile(*hops, 0.99), hops->size());
  return 0;
}

}  // namespace cerebro::bench
