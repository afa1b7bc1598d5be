// `cerebro pipeline-probe`: what pipeline stages cost against
// training the model whole, on synthetic data of a given shape. Per round, in
// turn (A B C D A B C D ...): (whole) one unit of the config trained whole;
// (in-process) the same unit as a pipeline of --stages stages in this thread;
// (actors) through stage actors in one actor system; (loopback) through stage
// actors of which stage 0 is in one actor system and the others in another,
// every message serialised over 127.0.0.1. Prints the medians, their ratios
// to whole, the split (bytes per stage) and how far the pipeline's loss is
// from the whole unit's (the actors' must equal the in-process one's).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/embedding.hpp"
#include "actors/pipeline_stage.hpp"
#include "models/pipeline_runner.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct PipelineProbeOptions {
  std::string params = R"({"model": "cnn"})";
  std::vector<int64_t> shape{1, 28, 28};  // Fashion-MNIST
  int64_t classes = 10;
  int64_t examples = 4096;
  int stages = 2;
  int micro_batches = 4;
  int rounds = 3;
  bool json = false;
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

datasets::Dataset synthetic(const std::vector<int64_t>& shape, int64_t classes, int64_t n) {
  datasets::Dataset d;
  d.sample_shape = shape;
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  d.features.resize(static_cast<size_t>(n * d.sample_numel()));
  for (auto& v : d.features) v = normal(rng);
  for (int64_t i = 0; i < n; ++i) d.labels.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(classes)));
  return d;
}

struct StageSystems {
  static caf::actor_system_config& configured(caf::actor_system_config& c) {
    configure_actor_system(c, true);
    return c;
  }
  caf::actor_system_config driver_config, host_config;
  caf::actor_system driver{configured(driver_config)};
  caf::actor_system host{configured(host_config)};
};

// Spawns the stages (stage 0 in `first`, the others in `rest`; published
// there and reached through the middleman when `rest` is another system).
Result<std::vector<pipeline_stage_actor>> spawn_stages(caf::actor_system& first, caf::actor_system& rest,
                                                       const nlohmann::json& params, const models::ShapeInfo& shape,
                                                       const std::vector<std::string>& parts, uint64_t seed,
                                                       std::vector<pipeline_stage_actor>& to_stop) {
  const bool remote = &first != &rest;
  std::vector<pipeline_stage_actor> stages;
  for (int s = 0; s < static_cast<int>(parts.size()); ++s) {
    caf::actor_system& system = s == 0 ? first : rest;
    auto stage = spawn_pipeline_stage(
        system, stage_setup{params, shape, static_cast<int>(parts.size()), s, parts[static_cast<size_t>(s)], seed});
    if (!stage.ok()) return stage.status();
    to_stop.push_back(*stage);
    if (s == 0 || !remote) {
      stages.push_back(*stage);
      continue;
    }
    auto port = rest.middleman().publish(*stage, 0, "127.0.0.1");
    if (!port) return Status::io_error("cannot publish a stage: " + rest.render(port.error()));
    auto proxy = first.middleman().remote_actor<pipeline_stage_actor>("127.0.0.1", *port);
    if (!proxy) return Status::unavailable("cannot reach a stage: " + first.render(proxy.error()));
    stages.push_back(*proxy);
  }
  return stages;
}

int probe(const PipelineProbeOptions& o, StageSystems& systems) {
  nlohmann::json params = nlohmann::json::parse(o.params, nullptr, false);
  if (params.is_discarded() || !params.is_object()) return fail("--params: not a JSON object: " + o.params);
  if (o.stages < 2) return fail(fmt::format("--stages: a pipeline needs at least 2 stages, got {}", o.stages));
  if (o.micro_batches < 1) return fail(fmt::format("--micro-batches: must be >= 1, got {}", o.micro_batches));
  if (o.rounds < 1) return fail(fmt::format("--rounds: must be >= 1, got {}", o.rounds));
  if (o.examples < 1) return fail(fmt::format("--examples: must be >= 1, got {}", o.examples));
  params["parallelism"] = "pipeline";
  params["stages"] = o.stages;
  params["micro_batches"] = o.micro_batches;
  models::ShapeInfo shape{o.shape, o.classes};
  if (Status s = models::check_params(params, shape); !s.ok()) return fail("--params: " + s.message());
  auto plan = models::plan_config(params, shape, PipelineLimits{o.stages, 0});
  if (!plan.ok()) return fail(plan.error());
  const datasets::Dataset data = synthetic(o.shape, o.classes, o.examples);
  const uint64_t seed = 5;
  auto whole_state = models::initial_state(params, shape, data, seed);
  if (!whole_state.ok()) return fail(whole_state.error());
  auto pipe_state = models::initial_pipeline_state(params, shape, o.stages, seed);
  if (!pipe_state.ok()) return fail(pipe_state.error());
  auto parts = unpack_stage_states(*pipe_state);
  if (!parts.ok()) return fail(parts.error());

  models::UnitInput in;
  in.params = &params;
  in.shape = shape;
  in.partition = &data;
  in.seed = 11;
  std::map<std::string, std::vector<double>> seconds;
  double whole_loss = 0, pipeline_loss = 0, actor_loss = 0, loopback_loss = 0;
  for (int round = 0; round < o.rounds; ++round) {
    in.state = &*whole_state;
    auto t = Clock::now();
    auto whole = models::train_unit(in);
    seconds["whole"].push_back(since(t));
    if (!whole.ok()) return fail(whole.error());
    whole_loss = whole->train_loss;

    in.state = &*pipe_state;
    t = Clock::now();
    auto piped = models::train_pipeline_unit(in);
    seconds["in_process"].push_back(since(t));
    if (!piped.ok()) return fail(piped.error());
    pipeline_loss = piped->train_loss;

    for (bool remote : {false, true}) {
      std::vector<pipeline_stage_actor> to_stop;
      auto stages =
          spawn_stages(systems.driver, remote ? systems.host : systems.driver, params, shape, *parts, in.seed, to_stop);
      if (!stages.ok()) return fail(stages.error());
      t = Clock::now();
      auto got = train_unit_through_stages(systems.driver, *stages, params, shape, data, in.seed, 600);
      seconds[remote ? "loopback" : "actors"].push_back(since(t));
      for (auto& a : to_stop) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
      if (!got.ok()) return fail(got.error());
      (remote ? loopback_loss : actor_loss) = got->train_loss;
    }
  }
  nlohmann::json out = {{"params", params},
                        {"examples", o.examples},
                        {"rounds", o.rounds},
                        {"stages", plan->stages},
                        {"stage_bytes", plan->stage_bytes},
                        {"total_bytes", plan->total_bytes},
                        {"loss_whole", whole_loss},
                        {"loss_pipeline", pipeline_loss},
                        {"loss_difference", std::abs(pipeline_loss - whole_loss)},
                        {"actors_match_in_process", actor_loss == pipeline_loss && loopback_loss == pipeline_loss}};
  const double whole_s = median(seconds["whole"]);
  for (const auto& [mode, values] : seconds) {
    out["median_s"][mode] = median(values);
    out["over_whole"][mode] = whole_s > 0 ? median(values) / whole_s : 0;
  }
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} over {} stages ({} bytes: {}), {} examples, medians of {} rounds:\n", params.dump(), plan->stages,
               plan->total_bytes, fmt::join(plan->stage_bytes, " + "), o.examples, o.rounds);
    for (const char* mode : {"whole", "in_process", "actors", "loopback"})
      fmt::print("  {:<11} {:8.3f} s  ({:.3f} x whole)\n", mode, out["median_s"][mode].get<double>(),
                 out["over_whole"][mode].get<double>());
    fmt::print("  loss whole {:.6f}, pipeline {:.6f}; actors match the in-process pipeline: {}\n", whole_loss,
               pipeline_loss, out["actors_match_in_process"].get<bool>() ? "yes" : "no");
  }
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<PipelineProbeOptions>();
  command.add_option("--params", o->params, "The config's hyper-parameters (JSON)")->capture_default_str();
  command.add_option("--shape", o->shape, "One example's shape")->delimiter(',')->capture_default_str();
  command.add_option("--classes", o->classes, "Classes")->capture_default_str();
  command.add_option("--examples", o->examples, "Synthetic examples in the unit")->capture_default_str();
  command.add_option("--stages", o->stages, "Pipeline stages")->capture_default_str();
  command.add_option("--micro-batches", o->micro_batches, "Micro-batches per batch")->capture_default_str();
  command.add_option("--rounds", o->rounds, "Interleaved rounds (medians)")->capture_default_str();
  command.add_flag("--json", o->json, "Print JSON");
  return [o]() -> int {
    // Left without tearing the two systems down: their middleman proxies and
    // published stages can keep it waiting long.
    StageSystems systems;
    leave_now(probe(*o, systems));
  };
}

const CommandRegistrar registrar{
    {"pipeline-probe", "Measure pipeline stages against training a model whole", 96, setup}};

}  // namespace

}  // namespace cerebro::cli
