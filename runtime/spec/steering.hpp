#pragma once
// Plain pieces of steering an experiment by hand (the REPL's add, clone and
// stop): hyper-parameter overrides given as "key=value", and the records of a
// person's actions kept with the search procedure's decisions in the state
// store (decision/ records), so show, replay and resume see them.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/spec/steering_command.hpp"

namespace cerebro {

// Parses "key=value" settings and applies them over `base` (an object). A
// value is read as JSON when it parses as JSON (0.01, true, [64,32],
// "text"), else as a plain string (mlp). Errors name the setting: "lr" (no
// '='), "=3" (no key), a repeated key.
Result<nlohmann::json> apply_settings(const nlohmann::json& base, const std::vector<std::string>& settings);

// A person's action on an experiment, as stored among the decision records:
// {"by": "user", "action": "pause" | "resume" | "stop" | "add", ...}.
// stop: "config", "epoch" (the epoch it was in); add: "config", "params",
// "epochs" and "cloned_from" (-1 for a fresh config; a clone is recorded as an add).
nlohmann::json user_action(SteeringCommand action);
// True for a record made by user_action (the search procedure's own
// decisions have no "by").
bool is_user_action(const nlohmann::json& record);

}  // namespace cerebro
