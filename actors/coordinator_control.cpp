#include "actors/coordinator_control.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "actors/experiment_steering.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/store/state_store.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

caf::error refuse(const std::string& text) { return caf::make_error(caf::sec::runtime_error, text); }

// A refusal the client may retry in a moment (actors/client.cpp keys on the code).
caf::error not_yet(const std::string& text) { return make_error(StatusCode::unavailable, text); }

// A finished run's store: the runner may still be closing it for a moment.
Result<std::unique_ptr<StateStore>> open_finished_store(const std::string& run_dir) {
  Result<std::unique_ptr<StateStore>> store = Status::error("not opened");
  for (int attempt = 0; attempt < 20; ++attempt) {
    store = StateStore::open((fs::path(run_dir) / "state").string(), false);
    if (store.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return store;
}

}  // namespace

caf::result<control_reply> handle_control(coordinator_actor::pointer self, const GatewayView& view,
                                          control_request request) {
  if (!tokens_equal(request.token, view.token)) return refuse("wrong token");
  const SteeringCommandInfo* command = find_steering_command(request.command);
  if (!command) return refuse(fmt::format("unknown command {}", static_cast<int>(request.command)));
  if (request.settings.size() > 64) return refuse("too many settings");
  auto found = view.find(request.experiment);
  if (!found)
    return make_error(StatusCode::not_found, request.experiment.empty()
                                                 ? std::string("no experiment has been submitted yet")
                                                 : fmt::format("no experiment {}", request.experiment.substr(0, 80)));
  auto experiment = std::move(*found);
  request.experiment = experiment.id;
  if (experiment.status == ExperimentStatus::running) {
    if (!experiment.follower) return not_yet(fmt::format("experiment {} {}", experiment.id, still_setting_up));
    // The runner blocks for pilot checks of added configs: give it time.
    auto promise = self->make_response_promise<control_reply>();
    auto id = experiment.id;
    self->request(experiment.follower, std::chrono::seconds(120), control_atom::value, std::move(request))
        .then([promise](control_reply& reply) mutable { promise.deliver(std::move(reply)); },
              [promise, id](caf::error& e) mutable {
                // The runner left its loop (training is over) before it read the request.
                if (e == caf::sec::request_receiver_down) e = not_yet(fmt::format("experiment {} {}", id, finishing));
                promise.deliver(std::move(e));
              });
    return promise;
  }
  if (!command->reads_store) {
    const bool adds = request.command == SteeringCommand::add || request.command == SteeringCommand::clone;
    return refuse(fmt::format("experiment {} has ended ({}): it cannot be {}", experiment.id,
                              to_string(experiment.status), adds ? "added to" : "steered"));
  }
  // A quick read of a finished run's store, in the gateway itself.
  auto store = open_finished_store(experiment.run_dir);
  if (!store.ok()) return refuse(store.error());
  auto reply = answer_from_store(**store, request, experiment.run_dir, false);
  if (!reply.ok()) return make_error(reply.code(), reply.error());
  reply->experiment = experiment.id;
  return std::move(reply).value();
}

}  // namespace cerebro
