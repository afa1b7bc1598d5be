#pragma once
// What LocalCluster and AttachedCluster share behind submit() (.cpp files
// only; actors/embedding.hpp is the API).

#include <utility>

#include <caf/all.hpp>

#include "actors/embedding.hpp"

namespace cerebro {

// Runs `run` in a detached actor of its own: the experiment blocks that
// thread, not the caller's, and the actor system waits for it on shutdown.
template <class Run>
inline void submit_detached(caf::actor_system& system, ExperimentRequest request, experiment_listener_actor listener,
                            Run run) {
  system.spawn<caf::detached>(
      [request = std::move(request), listener = std::move(listener), run = std::move(run)](caf::blocking_actor* self) {
        auto result = run(self->system(), request, listener);
        if (!listener) return;  // nobody to tell: the run directory holds the outcome
        self->send(listener, done_atom::value, request.experiment_id,
                   result.ok() ? *result : failed_result(request.experiment_id, request.run_dir, result.error()));
      });
}

}  // namespace cerebro
