#include "runtime/net/messages.hpp"

namespace cerebro {

void register_message_types(caf::actor_system_config& config) {
  config.add_message_type<unit_task>("unit_task");
  config.add_message_type<unit_result>("unit_result");
  config.add_message_type<progress_update>("progress_update");
  config.add_message_type<experiment_done>("experiment_done");
  config.add_message_type<state_copy>("state_copy");
  config.add_message_type<UnitLogEntry>("unit_log_entry");
  config.add_message_type<SearchDecision>("search_decision");
}

}  // namespace cerebro
