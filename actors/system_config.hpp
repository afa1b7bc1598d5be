#pragma once
// The CAF configuration every cerebro process uses: all message types
// registered, the middleman loaded where nodes talk to each other.

#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/cluster_messages.hpp"
#include "runtime/messages.hpp"

namespace cerebro {

enum class system_role { embedded, coordinator, agent, client };

class cerebro_system_config : public caf::actor_system_config {
 public:
  explicit cerebro_system_config(system_role role) {
    register_message_types(*this);
    register_cluster_message_types(*this);
    if (role != system_role::embedded) load<caf::io::middleman>();
  }
};

}  // namespace cerebro
