// The rendezvous board's actor: a thin shell over
// runtime/cluster/RendezvousBoard. Answers at once, so it never blocks.
#include "actors/actors.hpp"
#include "runtime/cluster/rendezvous_board.hpp"

namespace cerebro {

namespace {

struct rendezvous_state {
  RendezvousBoard board;
  static inline const char* name = "cerebro.rendezvous";
};

using rendezvous_ptr = rendezvous_actor::stateful_pointer<rendezvous_state>;

rendezvous_actor::behavior_type rendezvous_behavior(rendezvous_ptr self) {
  return {
      [self](rendezvous_atom, const rendezvous_request& request) { return self->state.board.handle(request); },
      [self](rendezvous_atom, int64_t gang) { self->state.board.close(gang); },
  };
}

}  // namespace

rendezvous_actor spawn_rendezvous_board(caf::actor_system& system) { return system.spawn(rendezvous_behavior); }

}  // namespace cerebro
