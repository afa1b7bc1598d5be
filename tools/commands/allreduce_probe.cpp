// `cerebro allreduce-probe`: what a data-parallel gang (issue 14) pays per
// step: the allreduce of a config's gradients over c10d ProcessGroupGloo,
// `--ranks` ranks as threads of this process on one address (loopback by
// default), each its own Gloo endpoint over TCP. Prints the mean seconds per
// allreduce; the gang planner's allreduce cost is this figure.
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
  bool json = false;
};

int probe(const ProbeOptions& o) {
  nlohmann::json params = nlohmann::json::parse(o.params, nullptr, false);
  if (params.is_discarded() || !params.is_object()) return fail("--params: not a JSON object: " + o.params);
  if (o.ranks < 2) return fail(fmt::format("--ranks: a gang needs at least 2 ranks, got {}", o.ranks));
  if (o.repeats < 1) return fail(fmt::format("--repeats: must be >= 1, got {}", o.repeats));
  models::ShapeInfo shape{o.shape, o.classes};
  if (Status s = models::check_params(params, shape); !s.ok()) return fail("--params: " + s.message());
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
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"params", params}, {"ranks", o.ranks}, {"repeats", o.repeats},
                                      {"address", o.address}, {"allreduce_s", *seconds}}
                           .dump(2));
  } else {
    fmt::print("{} ranks, {}: {:.3f} ms per allreduce of the gradients (mean of {})\n", o.ranks, params.dump(),
               *seconds * 1000, o.repeats);
  }
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
  command.add_flag("--json", o->json, "Print JSON");
  return [o] { return probe(*o); };
}

const CommandRegistrar registrar{
    {"allreduce-probe", "Measure a data-parallel gang's gradient allreduce per step (c10d Gloo)", 95, setup}};

}  // namespace

}  // namespace cerebro::cli
