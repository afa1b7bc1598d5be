#include "runtime/net/pipeline_messages.hpp"

namespace cerebro {

void register_pipeline_message_types(caf::actor_system_config& config) {
  config.add_message_type<stage_tensor>("stage_tensor");
}

}  // namespace cerebro
