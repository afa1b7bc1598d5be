// `cerebro allreduce-probe`: what a data-parallel gang (issue 14) pays per
// step: the allreduce of a config's gradients over c10d ProcessGroupGloo,
// `--ranks` ranks as threads of this process on one address (loopback by
// default), each its own Gloo endpoint over TCP. Prints the mean seconds per
// allreduce; the gang planner's allreduce cost is this figure.
// With --rank, this process is that one rank of a gang spanning processes:
// rank 0 prints `store port N` first (what the coordinator would pass on),
// rank r > 0 joins with --store-port N.
#include <cstdio>
#include <future>
#include <memory>
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
};

void print_result(const ProbeOptions& o, const nlohmann::json& params, double seconds) {
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"params", params}, {"ranks", o.ranks}, {"rank", o.rank},
                                      {"repeats", o.repeats}, {"address", o.address}, {"allreduce_s", seconds}}
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

int probe(const ProbeOptions& o) {
  nlohmann::json params = nlohmann::json::parse(o.params, nullptr, false);
  if (params.is_discarded() || !params.is_object()) return fail("--params: not a JSON object: " + o.params);
  if (o.ranks < 2) return fail(fmt::format("--ranks: a gang needs at least 2 ranks, got {}", o.ranks));
  if (o.repeats < 1) return fail(fmt::format("--repeats: must be >= 1, got {}", o.repeats));
  models::ShapeInfo shape{o.shape, o.classes};
  if (Status s = models::check_params(params, shape); !s.ok()) return fail("--params: " + s.message());
  if (o.rank >= 0) return probe_one_rank(o, params, shape);
  auto host = models::GangSession::host(o.address, o.ranks, 60);
  if (!host.ok()) return fail(host.error());
  std::unique_ptr<models::GangSession> rank0 = std::move(host).value();
  int port = rank0->port();
  std::vector<std::future<Result<double>>> others;
  for (int rank = 1; rank < o.ranks; ++rank) {
    others.push_back(std::async(std::launch::async, [&, rank]() -> Result<double> {
      auto joined = models::GangSession::join(o.address, port, o.address, rank, o.ranks, 60);
      if (!joined.ok()) return joined.status();
      return models::measure_allreduce(**joined, params, shape, o.repeats);
    }));
  }
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
  command.add_flag("--json", o->json, "Print JSON");
  return [o] { return probe(*o); };
}

const CommandRegistrar registrar{
    {"allreduce-probe", "Measure a data-parallel gang's gradient allreduce per step (c10d Gloo)", 95, setup}};

}  // namespace

}  // namespace cerebro::cli
