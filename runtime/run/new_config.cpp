#include "runtime/run/new_config.hpp"

#include <fmt/format.h>

#include "runtime/run/objectives.hpp"
#include "runtime/store/pipeline_state.hpp"

namespace cerebro {

Status store_new_config(StateStore& store, const NewConfig& config) {
  if (config.stages >= 2 && !config.stages_recorded) {
    if (auto st = record_pipeline_stages(store, config.id, config.stages); !st.ok()) return st;
  }
  if (auto st = store.put_initial_state(config.id, config.initial_state); !st.ok())
    return st.with_context(fmt::format("config {}'s initial state", config.id));
  if (auto st = store.put_config({config.id, config.params, ConfigStatus::running, ""}); !st.ok())
    return st.with_context(fmt::format("config {}'s record", config.id));
  if (config.parameters) {
    if (auto st = store.put_meta(parameters_meta_key(config.id), std::to_string(*config.parameters)); !st.ok())
      return st.with_context(fmt::format("config {}'s parameter count", config.id));
  }
  return Status::ok_status();
}

}  // namespace cerebro
