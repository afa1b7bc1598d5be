#pragma once
// The gateway's steering handler (kept apart from actors/coordinator.cpp):
// (control_atom, control_request) -> control_reply. A running experiment's
// request goes to its runner (actors/experiment_steering.hpp), which owns the
// run's store and data and tells the scheduler; the read-only commands of an
// experiment that does not run go to the reader of ended runs, which keeps
// their stores open (actors/finished_run_reader.hpp).

#include <functional>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "runtime/base/lifecycle.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

// What the handler needs to know of one experiment of the coordinator.
struct ExperimentRef {
  std::string id;
  ExperimentStatus status = ExperimentStatus::running;
  std::string run_dir;
  run_follower_actor follower;  // the run's follower, once training started (empty before and after)
  // Bumped at each change of status: the reader of ended runs reopens a
  // store whose generation is older (actors/finished_run_reader.hpp).
  uint64_t generation = 0;
};

struct GatewayView {
  std::string token;
  // The experiment named `id`; for an empty id the most recently submitted.
  std::function<std::optional<ExperimentRef>(const std::string& id)> find;
  // Answers the read-only commands of experiments that do not run
  // (actors/finished_run_reader.hpp), so the gateway never opens a store.
  finished_run_reader_actor reader;
  // A pause or resume the experiment's follower applied (the status shows it).
  std::function<void(const std::string& id, bool paused)> paused;
};

// Errors, with their codes: invalid_argument (a wrong token, an unknown
// command, too many settings), not_found (no such experiment),
// failed_precondition (steering an ended experiment), unavailable (the
// experiment is setting up or finishing: ask again).
caf::result<control_reply> handle_control(coordinator_actor::pointer self, const GatewayView& view,
                                          control_request request);

// The texts of the errors a client gets while the experiment prepares its
// data, and between its last unit and the end of its run (test score,
// export, files). Both come with StatusCode::unavailable: the client may
// retry (actors/client.cpp does), the answer changes in a moment.
constexpr const char* still_setting_up = "is still setting up (preparing and placing its data)";
constexpr const char* finishing = "is finishing (its training is over; the run's files are being written)";

}  // namespace cerebro
