#pragma once
// Request bodies of the HTTP API, checked before anything is asked of the
// coordinator: a body that is too large, not JSON, or has a parameter that
// cannot be a hyper-parameter is refused with a message naming what is wrong,
// so a bad body never changes state.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// The parts of a multipart form: a submission's TOML spec, or an uploaded dataset's description
// ({"name", "data"} as JSON), and the files it brings.
enum class SubmissionPart { spec, dataset, file };
std::optional<SubmissionPart> parse_submission_part(const std::string& name);

// The JSON every error answers: {"error": message, "status": http_status}.
std::string error_json(int http_status, const std::string& message);

// A spec parser's message (runtime/spec/spec_section.hpp Problems: one problem per line, "ORIGIN:LINE:COLUMN:
// TEXT" or "ORIGIN: TEXT") as structured fields, for a client to point at the line: one
// {"message", "key", "line", "column"} per problem, the message without the origin and position, the key
// as "[section] name" when the text names one ("[data] path must ...", "unknown key 'lrr' in [experiment]"),
// else null, line and column null without a position. A line of another form is a problem of its own,
// whole.
nlohmann::json spec_problems(const std::string& message, const std::string& origin);

}  // namespace cerebro::api
