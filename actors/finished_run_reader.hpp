#pragma once
// The coordinator's reader of experiments that do not run (ended, or waiting
// to resume): a detached actor, linked to the gateway, that answers their
// read-only commands (detail, units, top, show, configs, export) from
// runtime/api/FinishedRuns, where each store is opened read-only once and its
// answers are kept. The gateway only forwards: it never opens RocksDB while
// an API poller or the REPL reads an ended run.

#include <cstdint>
#include <string>

#include <caf/all.hpp>

namespace cerebro {

// (control_atom, control_request, std::string run_dir, uint64_t generation) -> control_reply
//   `generation`: the experiment's, bumped by the gateway at each change of state.
// (drop_store_atom, std::string experiment): close its store (it changed state).
using drop_store_atom = caf::atom_constant<caf::atom("dropstore")>;

caf::behavior finished_run_reader(caf::event_based_actor*);

}  // namespace cerebro
