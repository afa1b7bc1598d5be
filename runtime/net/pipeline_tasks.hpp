#pragma once
// The messages of a pipeline attempt between the scheduler and
// its crew's workers, with their inspect functions: a stage host builds its
// stage and answers the stage actor's handle; the driver trains the unit
// through the stages and answers one unit_result (the framed pipeline state).
// A driver's task carries stage actors' handles, so it lives in the
// networking layer like the gang messages.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/base/messages.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/net/pipeline_messages.hpp"

namespace cerebro {

// Host stage `index` (1..stages-1) of the unit's config: built from the
// stage's own state with the unit's seed (its dropout stream). unit.state is
// that stage's state (one element of unpack_stage_states), not the config's.
struct stage_host_task {
  unit_task unit;
  int32_t stages = 2;
  int32_t index = 1;
};

// Drive the unit: stage 0 here (from unit.state, the config's framed
// pipeline state), stages 1..k-1 on `hosts`, each answer within timeout_s.
struct pipeline_task {
  unit_task unit;
  std::vector<pipeline_stage_actor> hosts;
  double timeout_s = 60;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stage_host_task& x) {
  return f(caf::meta::type_name("stage_host_task"), x.unit, x.stages, x.index);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pipeline_task& x) {
  return f(caf::meta::type_name("pipeline_task"), x.unit, x.hosts, x.timeout_s);
}

}  // namespace cerebro
