#pragma once
// The state of a config that trains as a pipeline (issue 14): its stages'
// states, each serialised on its own (parameters, buffers and optimizer state
// of that stage's links, models/pipeline.hpp), framed into the one state the
// checkpoint store holds for the config, so a pipeline config commits, hops
// and resumes like any other.
//
// Layout (little-endian):
//   "cerebro-pipeline-state/1\n"   magic, 25 bytes
//   uint32 stage count k (>= 1)
//   k times: uint64 length, then that many bytes of the stage's state
// Nothing may follow the last stage. A state without the magic is an
// ordinary (whole-model) state.

#include <string>
#include <vector>

#include "runtime/base/status.hpp"

namespace cerebro {

// Frames the stages' states, stage 0 first.
std::string pack_stage_states(const std::vector<std::string>& stages);

// Whether `state` is a pipeline state (starts with the magic).
bool is_pipeline_state(const std::string& state);

// The stages' states; corruption for a truncated or malformed frame,
// invalid_argument for a state that is not a pipeline state.
Result<std::vector<std::string>> unpack_stage_states(const std::string& state);

}  // namespace cerebro
