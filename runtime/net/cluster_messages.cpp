#include "runtime/net/cluster_messages.hpp"

#include "runtime/net/error_category.hpp"

namespace cerebro {

void register_cluster_message_types(caf::actor_system_config& config) {
  config.add_message_type<agent_resources>("agent_resources");
  config.add_message_type<join_request>("join_request");
  config.add_message_type<join_reply>("join_reply");
  config.add_message_type<shard_placement>("shard_placement");
  config.add_message_type<submit_request>("submit_request");
  config.add_message_type<dataset_request>("dataset_request");
  config.add_message_type<run_files>("run_files");
  config.add_message_type<control_request>("control_request");
  config.add_message_type<control_reply>("control_reply");
  // Typed handles sent on their own (a respawned worker crosses the network
  // in the agent's answer); inside the structs above they need no entry.
  config.add_message_type<worker_actor>("cerebro::worker_actor");
  config.add_message_type<std::vector<worker_actor>>("std::vector<cerebro::worker_actor>");
  config.add_message_type<agent_actor>("cerebro::agent_actor");
}

std::string error_text(const caf::error& error) { return to_status(error).message(); }

}  // namespace cerebro
