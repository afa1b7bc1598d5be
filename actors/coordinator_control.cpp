#include "actors/coordinator_control.hpp"

#include <chrono>

#include <fmt/format.h>

#include "actors/experiment_steering.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace {

// A refusal the client may retry in a moment (actors/client.cpp keys on the code).
caf::error not_yet(const std::string& text) { return make_error(StatusCode::unavailable, text); }

}  // namespace

caf::result<control_reply> handle_control(coordinator_actor::pointer self, const GatewayView& view,
                                          control_request request) {
  if (!tokens_equal(request.token, view.token)) return make_error(StatusCode::invalid_argument, "wrong token");
  const SteeringCommandInfo* command = find_steering_command(request.command);
  if (!command)
    return make_error(StatusCode::invalid_argument,
                      fmt::format("unknown command {}", static_cast<int>(request.command)));
  if (request.settings.size() > 64) return make_error(StatusCode::invalid_argument, "too many settings");
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
    const auto command_sent = request.command;
    auto paused = view.paused;
    self->request(experiment.follower, std::chrono::seconds(120), control_atom::value, std::move(request))
        .then(
            [promise, id, command_sent, paused](control_reply& reply) mutable {
              const bool pauses = command_sent == SteeringCommand::pause;
              if (paused && (pauses || command_sent == SteeringCommand::resume)) paused(id, pauses);
              promise.deliver(std::move(reply));
            },
            [promise, id](caf::error& e) mutable {
              // The runner left its loop (training is over) before it read the request.
              if (e == caf::sec::request_receiver_down) e = not_yet(fmt::format("experiment {} {}", id, finishing));
              promise.deliver(std::move(e));
            });
    return promise;
  }
  if (!command->reads_store) {
    const bool adds = request.command == SteeringCommand::add || request.command == SteeringCommand::clone;
    return make_error(StatusCode::failed_precondition,
                      fmt::format("experiment {} has ended ({}): it cannot be {}", experiment.id,
                                  to_string(experiment.status), adds ? "added to" : "steered"));
  }
  // Read by the reader of ended runs, in its own thread: the gateway stays free for heartbeats and pollers.
  auto promise = self->make_response_promise<control_reply>();
  self->request(view.reader, std::chrono::seconds(120), control_atom::value, std::move(request), experiment.run_dir,
                experiment.generation)
      .then([promise](control_reply& reply) mutable { promise.deliver(std::move(reply)); },
            [promise](caf::error& e) mutable { promise.deliver(std::move(e)); });
  return promise;
}

}  // namespace cerebro
