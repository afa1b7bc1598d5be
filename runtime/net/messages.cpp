#include "runtime/net/messages.hpp"

#include "runtime/net/error_category.hpp"
#include "runtime/net/gang_messages.hpp"
#include "runtime/net/pipeline_messages.hpp"
#include "runtime/net/pipeline_tasks.hpp"

namespace cerebro {

void register_message_types(caf::actor_system_config& config) {
  config.add_message_type<unit_task>("unit_task");
  config.add_message_type<unit_result>("unit_result");
  config.add_message_type<progress_update>("progress_update");
  config.add_message_type<experiment_done>("experiment_done");
  config.add_message_type<state_copy>("state_copy");
  config.add_message_type<UnitLogEntry>("unit_log_entry");
  config.add_message_type<SearchDecision>("search_decision");
  // Data-parallel gangs.
  config.add_message_type<rendezvous_request>("rendezvous_request");
  config.add_message_type<rendezvous_reply>("rendezvous_reply");
  config.add_message_type<gang_task>("gang_task");
  config.add_message_type<gang_result>("gang_result");
  config.add_message_type<gang_commit>("gang_commit");
  config.add_message_type<std::vector<UnitLogEntry>>("unit_log_entries");
  register_pipeline_message_types(config);
  config.add_message_type<pipeline_stage_actor>("pipeline_stage_actor");
  config.add_message_type<std::vector<pipeline_stage_actor>>("pipeline_stage_actors");
  config.add_message_type<stage_host_task>("stage_host_task");
  config.add_message_type<pipeline_task>("pipeline_task");
  register_error_category(config);
}

}  // namespace cerebro
