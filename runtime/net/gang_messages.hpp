#pragma once
// The messages of data-parallel gangs between the scheduler, the
// member workers, the rendezvous board and the checkpoint actor, with their
// inspect functions. A gang task carries the board's handle, so it lives in
// the networking layer like the cluster messages.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/base/messages.hpp"
#include "runtime/base/rendezvous.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

// One rank's part of a gang attempt: its unit (the config's params and
// state, its own partition and seed; validate on rank 0 when the gang ends
// the epoch), where the gang meets, and how long a rank waits for its peers.
struct gang_task {
  unit_task unit;
  int64_t gang = 0;  // the attempt's id: the rendezvous scope
  int32_t rank = 0;
  int32_t size = 0;
  double timeout_s = 30;  // a peer silent this long fails the attempt
  rendezvous_actor board;
};

// A rank's answer. unit.state is set on rank 0 only (every rank holds the
// same state; one travels). unit.examples are this rank's own, unit.train_loss
// the gang's mean loss; steps and allreduce_s are the gang's global steps and
// this rank's seconds in their allreduces.
struct gang_result {
  unit_result unit;
  int64_t steps = 0;
  double allreduce_s = 0;
};

// What the checkpoint actor makes durable for a gang: the members' results
// in rank order (the state of members[0]), their seeds, and the attempt's
// dispatch and commit times.
struct gang_commit {
  std::vector<unit_result> members;
  std::vector<uint64_t> seeds;
  double start_s = 0, end_s = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rendezvous_request& x) {
  return f(caf::meta::type_name("rendezvous_request"), x.gang, x.op, x.keys, x.value, x.number);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rendezvous_reply& x) {
  return f(caf::meta::type_name("rendezvous_reply"), x.found, x.value, x.number);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gang_task& x) {
  return f(caf::meta::type_name("gang_task"), x.unit, x.gang, x.rank, x.size, x.timeout_s, x.board);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gang_result& x) {
  return f(caf::meta::type_name("gang_result"), x.unit, x.steps, x.allreduce_s);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gang_commit& x) {
  return f(caf::meta::type_name("gang_commit"), x.members, x.seeds, x.start_s, x.end_s);
}

}  // namespace cerebro
