// `cerebro allreduce-probe`: what a data-parallel gang pays per
// step: the allreduce of a config's gradients over c10d ProcessGroupGloo,
// `--ranks` ranks as threads of this process on one address (loopback by
// default), each its own Gloo endpoint over TCP, meeting through an
// in-memory store. Prints the mean seconds per
// allreduce; the gang planner's allreduce cost is this figure.
// With --rank, this process is that one rank of a gang spanning processes:
// rank 0 prints `store port N` first (what the coordinator would pass on),
// rank r > 0 joins with --store-port N. That store is a c10d TCPStore, whose
// server binds every interface: --rank is for measurements on one machine.
// With --train N: where a gang rank's time goes against MOP (see
// profile_gang below; docs/BENCHMARKS.md, "`cerebro allreduce-probe`: the sum and the gang step").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/gang_trainer.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct ProbeOptions {
  std::string params = R"({"model": "cnn"})";
  std::vector<int64_t> shape{1, 28, 28};  // Fashion-MNIST
  int64_t classes = 10;
  int ranks = 2;
  int repeats = 50;
  std::string address = "127.0.0.1";
  int rank = -1;  // -1: every rank, as threads of this process
  std::string store_address = "127.0.0.1";
  int store_port = 0;
  bool json = false;
  int64_t train = 0;  // > 0: profile a gang's training on this many examples per rank
  int rounds = 3;
};

void print_result(const ProbeOptions& o, const nlohmann::json& params, double seconds) {
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"params", params},
                                      {"ranks", o.ranks},
                                      {"rank", o.rank},
                                      {"repeats", o.repeats},
                                      {"address", o.address},
                                      {"allreduce_s", seconds}}
                           .dump(2));
  } else {
    fmt::print("{} ranks, {}: {:.3f} ms per allreduce of the gradients (mean of {})\n", o.ranks, params.dump(),
               seconds * 1000, o.repeats);
  }
}

// One rank of a gang whose ranks are processes.
int probe_one_rank(const ProbeOptions& o, const nlohmann::json& params, const models::ShapeInfo& shape) {
  if (o.rank >= o.ranks) return fail(fmt::format("--rank: {} outside 0..{}", o.rank, o.ranks - 1));
  std::unique_ptr<models::GangSession> session;
  if (o.rank == 0) {
    auto host = models::GangSession::host(o.address, o.ranks, 60);
    if (!host.ok()) return fail(host.error());
    session = std::move(host).value();
    fmt::print("store port {}\n", session->port());
    std::fflush(stdout);
  } else {
    if (o.store_port < 1) return fail("--store-port: rank > 0 needs the port rank 0 printed");
    auto joined = models::GangSession::join(o.store_address, o.store_port, o.address, o.rank, o.ranks, 60);
    if (!joined.ok()) return fail(joined.error());
    session = std::move(joined).value();
  }
  Result<double> seconds = models::measure_allreduce(*session, params, shape, o.repeats);
  if (!seconds.ok()) return fail(seconds.error());
  print_result(o, params, *seconds);
  return 0;
}

// --- --train: where a gang rank's time goes.

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Pixel-like synthetic data: training costs what real data of this shape costs.
datasets::Dataset synthetic(const models::ShapeInfo& shape, int64_t n, uint64_t seed) {
  datasets::Dataset d;
  d.sample_shape = shape.sample_shape;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  d.features.resize(static_cast<size_t>(n * d.sample_numel()));
  for (auto& f : d.features) f = pixel(rng);
  d.labels.resize(static_cast<size_t>(n));
  for (auto& l : d.labels) l = static_cast<int64_t>(rng() % static_cast<uint64_t>(shape.num_classes));
  return d;
}

struct ProfileSetup {
  const models::ShapeInfo* shape;
  std::string state;
  std::vector<datasets::Dataset> parts;  // one per rank
  models::UnitInput input(const nlohmann::json& params, size_t rank) const {
    models::UnitInput in;
    in.params = &params;
    in.shape = *shape;
    in.state = &state;
    in.partition = &parts[rank];
    in.seed = rank + 1;
    return in;
  }
};

// Every part trained as a unit of `params`: one after another in this thread,
// or all at once on a thread each. The wall seconds.
Result<double> time_units(const ProfileSetup& s, const nlohmann::json& params, bool at_once) {
  std::vector<Status> errors(s.parts.size());
  auto run = [&](size_t r) {
    auto out = models::train_unit(s.input(params, r));
    if (!out.ok()) errors[r] = out.status();
  };
  auto start = Clock::now();
  if (at_once) {
    std::vector<std::thread> threads;
    for (size_t r = 0; r < s.parts.size(); ++r) threads.emplace_back(run, r);
    for (auto& t : threads) t.join();
  } else {
    for (size_t r = 0; r < s.parts.size(); ++r) run(r);
  }
  double seconds = since(start);
  for (const auto& e : errors)
    if (!e.ok()) return e;
  return seconds;
}

struct GangTiming {
  double wall_s = 0, allreduce_s = 0;
  int64_t steps = 0;
};

// The parts trained by a gang whose ranks are threads of this process.
Result<GangTiming> time_gang(const ProfileSetup& s, const nlohmann::json& params) {
  auto gang = models::local_gang(static_cast<int>(s.parts.size()), 60);
  if (!gang.ok()) return gang.status();
  std::vector<Result<models::GangUnitOutput>> out(s.parts.size(), Status::internal("not run"));
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t r = 1; r < s.parts.size(); ++r)
    threads.emplace_back([&, r] { out[r] = models::train_gang_unit(*(*gang)[r], s.input(params, r)); });
  out[0] = models::train_gang_unit(*(*gang)[0], s.input(params, 0));
  for (auto& t : threads) t.join();
  GangTiming timing;
  timing.wall_s = since(start);
  for (const auto& o : out)
    if (!o.ok()) return o.status();
  timing.allreduce_s = out[0]->allreduce_s;
  timing.steps = out[0]->steps;
  return timing;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Per round, in this order, on --train examples per rank (synthetic data):
//   mop:         one thread trains the ranks' units one after another at the
//                config's batch (MOP with a single config);
//   half:        the same at batch / ranks (what the smaller batch alone
//                costs: LibTorch's per-step fixed cost);
//   half_at_once: a thread per unit at batch / ranks, all at once, no
//                allreduce (+ the ranks sharing the machine's cores);
//   gang:        a gang of `ranks` threads over the same units (+ the
//                allreduces and waiting for the slower rank);
//   two_configs: a thread per unit at the config's batch, all at once (what
//                more workers give independent configs).
// Medians over the rounds; gang speedup = mop / gang, more workers =
// mop / two_configs, and their ratio: (a)'s figures without the runtime.
int profile_gang(const ProbeOptions& o, const nlohmann::json& params, const models::ShapeInfo& shape) {
  if (o.rounds < 1) return fail(fmt::format("--rounds: must be >= 1, got {}", o.rounds));
  models::configure_threads(1);  // a worker's setting
  ProfileSetup s;
  s.shape = &shape;
  for (int r = 0; r < o.ranks; ++r) s.parts.push_back(synthetic(shape, o.train, static_cast<uint64_t>(r) + 7));
  auto state = models::initial_state(params, shape, s.parts[0], 1);
  if (!state.ok()) return fail(state.error());
  s.state = std::move(state).value();
  const int64_t batch = params.value("batch_size", int64_t{64});
  if (batch < o.ranks) return fail(fmt::format("batch_size {} is smaller than the {} ranks", batch, o.ranks));
  nlohmann::json half = params;
  half["batch_size"] = (batch + o.ranks - 1) / o.ranks;
  std::map<std::string, std::vector<double>> seconds;
  std::vector<double> allreduce;
  int64_t steps = 0;
  for (int round = 0; round < o.rounds; ++round) {
    struct Variant {
      const char* name;
      const nlohmann::json* params;
      bool at_once;
    };
    for (const Variant& v :
         {Variant{"mop", &params, false}, Variant{"half", &half, false}, Variant{"half_at_once", &half, true}}) {
      auto t = time_units(s, *v.params, v.at_once);
      if (!t.ok()) return fail(t.error());
      seconds[v.name].push_back(*t);
    }
    auto g = time_gang(s, params);
    if (!g.ok()) return fail(g.error());
    seconds["gang"].push_back(g->wall_s);
    allreduce.push_back(g->allreduce_s);
    steps = g->steps;
    auto two = time_units(s, params, true);
    if (!two.ok()) return fail(two.error());
    seconds["two_configs"].push_back(*two);
  }
  nlohmann::json medians;
  for (const auto& [name, v] : seconds) medians[name] = median(v);
  const double gang_speedup = medians["mop"].get<double>() / medians["gang"].get<double>();
  const double more_workers = medians["mop"].get<double>() / medians["two_configs"].get<double>();
  nlohmann::json result{{"params", params},
                        {"ranks", o.ranks},
                        {"examples_per_rank", o.train},
                        {"rounds", o.rounds},
                        {"median_s", medians},
                        {"gang_steps", steps},
                        {"gang_allreduce_s", median(allreduce)},
                        {"gang_speedup", gang_speedup},
                        {"more_workers_speedup", more_workers},
                        {"ratio", gang_speedup / more_workers}};
  if (o.json) {
    fmt::print("{}\n", result.dump(2));
    return 0;
  }
  fmt::print("{} ranks x {} examples, {} (medians of {} rounds, seconds):\n", o.ranks, o.train, params.dump(),
             o.rounds);
  for (auto it = medians.begin(); it != medians.end(); ++it)
    fmt::print("  {:<13} {:.3f}\n", it.key(), it.value().get<double>());
  fmt::print("  gang: {} steps, {:.3f} s of allreduce beyond backward (rank 0)\n", steps, median(allreduce));
  fmt::print("gang speedup over MOP {:.3f}; {} workers for {} configs {:.3f}; ratio {:.3f}\n", gang_speedup, o.ranks,
             o.ranks, more_workers, gang_speedup / more_workers);
  return 0;
}

int probe(const ProbeOptions& o) {
  nlohmann::json params = nlohmann::json::parse(o.params, nullptr, false);
  if (params.is_discarded() || !params.is_object()) return fail("--params: not a JSON object: " + o.params);
  if (o.ranks < 2) return fail(fmt::format("--ranks: a gang needs at least 2 ranks, got {}", o.ranks));
  if (o.repeats < 1) return fail(fmt::format("--repeats: must be >= 1, got {}", o.repeats));
  models::ShapeInfo shape{o.shape, o.classes};
  if (Status s = models::check_params(params, shape); !s.ok()) return fail("--params: " + s.message());
  if (o.train > 0) return profile_gang(o, params, shape);
  if (o.rank >= 0) return probe_one_rank(o, params, shape);
  // Ranks as threads meet through an in-memory store: no rendezvous port.
  auto gang = models::local_gang(o.ranks, 60, o.address);
  if (!gang.ok()) return fail(gang.error());
  std::vector<std::future<Result<double>>> others;
  for (int rank = 1; rank < o.ranks; ++rank) {
    others.push_back(std::async(std::launch::async, [&, rank]() -> Result<double> {
      return models::measure_allreduce(*(*gang)[rank], params, shape, o.repeats);
    }));
  }
  models::GangSession* rank0 = (*gang)[0].get();
  Result<double> seconds = models::measure_allreduce(*rank0, params, shape, o.repeats);
  for (auto& other : others) {
    Result<double> r = other.get();
    if (!r.ok() && seconds.ok()) seconds = r.status();
  }
  if (!seconds.ok()) return fail(seconds.error());
  print_result(o, params, *seconds);
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<ProbeOptions>();
  command.add_option("--params", o->params, "The config's hyper-parameters (JSON)")->capture_default_str();
  command.add_option("--shape", o->shape, "One example's shape")->delimiter(',')->capture_default_str();
  command.add_option("--classes", o->classes, "Classes")->capture_default_str();
  command.add_option("--ranks", o->ranks, "Ranks (threads of this process)")->capture_default_str();
  command.add_option("--repeats", o->repeats, "Allreduces timed")->capture_default_str();
  command.add_option("--address", o->address, "The address every rank binds to")->capture_default_str();
  command.add_option("--rank", o->rank, "Be only this rank of a gang of processes (default: all ranks, as threads)");
  command.add_option("--store-address", o->store_address, "Rank 0's address (ranks > 0)")->capture_default_str();
  command.add_option("--store-port", o->store_port, "The port rank 0 printed (ranks > 0)");
  command.add_option("--train", o->train,
                     "Instead: profile a gang's training against MOP on this many synthetic examples per rank");
  command.add_option("--rounds", o->rounds, "--train: rounds (medians are reported)")->capture_default_str();
  command.add_flag("--json", o->json, "Print JSON");
  return [o] { return probe(*o); };
}

const CommandRegistrar registrar{
    {"allreduce-probe", "Measure a data-parallel gang's gradient allreduce per step (c10d Gloo)", 95, setup}};

}  // namespace

}  // namespace cerebro::cli
