#pragma once
// Request bodies of the HTTP API, checked before anything is asked of the
// coordinator: a body that is too large, not JSON, or has a parameter that
// cannot be a hyper-parameter is refused with a message naming what is wrong,
// so a bad body never changes state.

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/base/status.hpp"

namespace cerebro::api {

// The largest body the server reads (a spec is at most 1 MiB at the gateway).
constexpr size_t kMaxBodyBytes = 1 << 20;
// At most this many parameters in one clone or add (the gateway's limit).
constexpr size_t kMaxParams = 64;

// {"params": {"lr": 0.001, "hidden": [64]}} -> {"lr=0.001", "hidden=[64]"}: the
// "key=value" settings the REPL's clone and add take (runtime/spec/steering.hpp
// apply_settings reads each value as JSON). An empty body is no parameters.
// `require_one`: clone needs at least one (as in the REPL).
Result<std::vector<std::string>> settings_from_body(const std::string& body, bool require_one);

// A spec submitted as the body: TOML text, not empty, at most kMaxBodyBytes.
// (Its content is checked by the coordinator's spec parser.)
Status check_spec_body(const std::string& body);

// The JSON every error answers: {"error": message, "status": http_status}.
std::string error_json(int http_status, const std::string& message);

}  // namespace cerebro::api
