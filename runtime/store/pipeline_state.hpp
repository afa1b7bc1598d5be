#pragma once
// The state of a config that trains as a pipeline: its stages'
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

#include <map>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// Frames the stages' states, stage 0 first.
std::string pack_stage_states(const std::vector<std::string>& stages);

// Whether `state` is a pipeline state (starts with the magic).
bool is_pipeline_state(const std::string& state);

// The stages' states; corruption for a truncated or malformed frame,
// invalid_argument for a state that is not a pipeline state.
Result<std::vector<std::string>> unpack_stage_states(const std::string& state);

// How many stages `state` is framed in: 1 for an ordinary state.
Result<int32_t> stage_count_of(const std::string& state);

class StateStore;

// The run's record of its pipeline configs, the store's meta
// "pipeline_stages": {"<config id>": k, ...} for every config that trains
// over k >= 2 stages, whether planned at the start or created while the run
// trains (tpe, steering). A resumed run keeps each config's split from it.
// Empty when the meta is absent; corruption when it is not such an object.
Result<std::map<ConfigId, int32_t>> stored_pipeline_stages(const StateStore& store);
// Adds config `config`'s stage count (>= 2) to the meta, merged with what is
// there, in one synced write: durable before the config can be scheduled.
// Serialised within the process (read, merge, write).
Status record_pipeline_stages(StateStore& store, ConfigId config, int32_t stages);

}  // namespace cerebro
