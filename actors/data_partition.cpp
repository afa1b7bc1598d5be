#include "actors/actors.hpp"

namespace cerebro {

data_partition_actor spawn_data_partition(caf::actor_system& system, PartitionId id,
                                          std::shared_ptr<const datasets::Dataset> data) {
  return system.spawn([id, data]() -> data_partition_actor::behavior_type {
    return {
        [id, data](borrow_atom) {
          return partition_lease{id, data};
        },
    };
  });
}

}  // namespace cerebro
