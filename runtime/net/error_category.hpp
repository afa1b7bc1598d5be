#pragma once
// The project's status codes (runtime/base/status.hpp) as a CAF error
// category, so a failure keeps its code when an actor answers with it, in one
// process or across nodes: a corrupt checkpoint arrives at the scheduler as
// corruption, not as text to search.
//
// CAF 0.17 has no error_category<T> trait yet: an enum becomes an error code
// enum through a free make_error overload found by argument-dependent lookup
// (caf/sec.hpp does the same for CAF's own codes), and the actor system
// renders a category through a renderer registered with add_error_category.
// register_message_types (runtime/net/messages.hpp) registers this one.

#include <string>

#include <caf/all.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

// The category atom of every error made from a StatusCode.
constexpr caf::atom_value status_error_category = caf::atom("cerebro");

// A caf::error of `code` in the project's category; its context is `message`.
caf::error make_error(StatusCode code);
caf::error make_error(StatusCode code, std::string message);

// Status -> caf::error, keeping code and message (an ok status is no error).
caf::error to_error(const Status& status);
// caf::error -> Status: ours keep their code and message; CAF's own errors
// (a timeout, a lost peer) become StatusCode::unknown with CAF's text.
Status to_status(const caf::error& error);

// Lets the actor system render the category ("corruption: <message>").
void register_error_category(caf::actor_system_config& config);

}  // namespace cerebro
