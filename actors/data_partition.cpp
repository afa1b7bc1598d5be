#include "actors/actors.hpp"

namespace cerebro {

caf::actor spawn_data_partition(caf::actor_system& system, PartitionId id,
                                std::shared_ptr<const datasets::Dataset> data) {
  return system.spawn([id, data](caf::event_based_actor*) -> caf::behavior {
    return {
        [id, data](borrow_atom) { return partition_lease{id, data}; },
    };
  });
}

}  // namespace cerebro
