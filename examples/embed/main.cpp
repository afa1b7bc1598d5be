// sensor_service: a small service that embeds cerebro. It registers its own
// dataset source (a feed of sensor readings) and its own LibTorch module,
// runs a model selection on a local cluster inside its own actor system,
// runs it again when new data has arrived, printing the leaderboard of each
// round, and serves each round's best model with plain LibTorch.
// Usage: sensor_service WORK_DIR RESULT_JSON

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <caf/all.hpp>

#include "actors/embedding.hpp"
#include "residual_mlp.hpp"
#include "sensor_feed.hpp"
#include "serving.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Follows one experiment at `self`: prints the epoch events, returns the result.
cerebro::experiment_result wait_for_result(caf::scoped_actor& self) {
  cerebro::experiment_result result;
  bool running = true;
  self->receive_while(running)(
      [&](cerebro::progress_atom, const std::string& experiment, const cerebro::progress_update& p) {
        if (p.units_total == 0 || p.event.find("epoch") != std::string::npos)
          std::cout << "  [" << experiment << "] " << p.event << "\n";
      },
      [&](cerebro::done_atom, const std::string&, const cerebro::experiment_result& r) {
        result = r;
        running = false;
      });
  return result;
}

// One round's line of the result file.
json round_record(const cerebro::experiment_result& result, int64_t examples, double served) {
  auto summary = result.summary();
  std::set<std::string> models;
  for (const auto& c : summary["configs"]) models.insert(c["params"]["model"].get<std::string>());
  const auto& best = result.leaderboard.front();
  return {{"experiment", result.experiment},
          {"examples", examples},
          {"configs", result.leaderboard.size()},
          {"models", models},
          {"best_config", best.config},
          {"best_params", json::parse(best.params_json)},
          {"best_metric", best.metric},
          {"test_accuracy", summary["best"]["test_accuracy"]},
          {"served_accuracy", served},
          {"run_dir", result.run_dir}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: sensor_service WORK_DIR RESULT_JSON\n";
    return 2;
  }
  const fs::path work = argv[1];
  const std::string result_file = argv[2];

  caf::actor_system_config config;
  cerebro::configure_actor_system(config);
  caf::actor_system system(config);

  register_residual_mlp();
  SensorFeed feed(2026);
  auto registered = cerebro::datasets::register_dataset_source(
      "sensor_feed", [&feed]() -> cerebro::Result<cerebro::datasets::SourceData> { return feed.snapshot(); });
  if (!registered.ok()) {
    std::cerr << registered.message() << "\n";
    return 1;
  }

  cerebro::LocalCluster cluster(system, {2, (work / "cluster").string()});
  caf::scoped_actor self{system};
  // The listener's interface is typed (cerebro::experiment_listener_actor): the
  // scoped actor takes its two messages, so it is cast to that interface.
  auto listener = caf::actor_cast<cerebro::experiment_listener_actor>(self);
  json rounds = json::array();
  for (int round = 1; round <= 2; ++round) {
    feed.arrive(round == 1 ? 600 : 900);  // new readings arrived: select again on all of them
    auto spec = cerebro::SpecBuilder("sensors")
                    .data_source("sensor_feed")
                    .epochs(3)
                    .partitions(2)
                    .seed(7)
                    .space("model", {"residual_mlp", "mlp"})
                    .space("lr", {0.01, 0.002})
                    .build();
    if (!spec.ok()) {
      std::cerr << spec.error() << "\n";
      return 1;
    }
    const std::string id = "sensors-round-" + std::to_string(round);
    cluster.submit({*spec, id, (work / id).string()}, listener);
    auto result = wait_for_result(self);
    if (!result.ok()) {
      std::cerr << id << " failed: " << result.error << "\n";
      return 1;
    }
    std::cout << "\n"
              << id << " leaderboard (" << feed.size() << " readings, " << result.wall_s << " s):\n"
              << cerebro::format_leaderboard(result, 10) << "\n";
    // Serve the round's best model (exported as TorchScript) on fresh traffic.
    auto served = served_accuracy(result.run_dir, feed.sample(300));
    if (!served.ok()) {
      std::cerr << id << ": cannot serve the best model: " << served.error() << "\n";
      return 1;
    }
    std::cout << "serving " << result.run_dir << "/best_model.pt: accuracy " << *served << " on 300 fresh readings\n";
    rounds.push_back(round_record(result, feed.size(), *served));
  }
  std::ofstream(result_file) << json{{"rounds", rounds}}.dump(2) << "\n";
  return 0;
}
