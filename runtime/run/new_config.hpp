#pragma once
// A config created at a run's start or while it trains (tpe's proposals,
// steering's add and clone) is made durable before the scheduler hears of
// it, in one order whoever creates it: its pipeline split (a resumed run
// reads it back), its initial state, its record, and its parameter count
// when an objective is `parameters` (the live Pareto front reads it:
// runtime/api/pareto_view.hpp). The model-side work (planning the split,
// drawing the state, counting the parameters) is the caller's: this core
// library cannot build models.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

struct NewConfig {
  ConfigId id = 0;
  nlohmann::json params;
  int32_t stages = 1;  // >= 2: trains as a pipeline over that many stages
  std::string initial_state;
  // Kept when set: the caller counts it when an objective is `parameters`.
  std::optional<int64_t> parameters;
  // The split is already in the meta (planned with the run's own configs).
  bool stages_recorded = false;
};

// Writes `config` as a running config, the record last: a config without a
// record is not scheduled. Stops at the first write that fails and says
// which.
Status store_new_config(StateStore& store, const NewConfig& config);

}  // namespace cerebro
