#pragma once
// What a peer of the coordinator presents, checked before anything is
// allocated or written from it: an agent's resources, names that become file
// and directory names, and the cluster's token. Plain code: the coordinator's
// agent registry (runtime/cluster/agent_registry.hpp) judges joins with it,
// and runtime/net/cluster_validation.hpp adds the checks of messages that
// carry actor handles.

#include <cstdint>
#include <string>

#include "runtime/base/status.hpp"

namespace cerebro {

// What a node agent brings to the cluster (its CAF inspect is in
// runtime/net/cluster_messages.hpp: it travels in join_request).
struct agent_resources {
  std::string name;
  int32_t workers = 0;
  int32_t cores = 0;
  int64_t memory_bytes = 0;
  double speed = 0;  // units of a fixed calibration workload per second, one thread
};

// Names of agents and experiments: 1..64 characters of [A-Za-z0-9._-], not
// starting with '.', so they are safe as file and directory names.
Status validate_name(const std::string& what, const std::string& name);

// The name (validate_name) and every count in range; invalid_argument otherwise.
Status validate_resources(const agent_resources& r);

// Compares a presented token with the expected one in time independent of
// where they differ (and of the presented token's length). An empty expected
// token matches nothing.
bool tokens_equal(const std::string& presented, const std::string& expected);

}  // namespace cerebro
