#pragma once
// The coordinator's reader of experiments that do not run (ended, or waiting
// to resume): a detached actor, linked to the gateway, that answers their
// read-only commands (detail, units, top, show, configs, export) from
// runtime/api/FinishedRuns, where each store is opened read-only once and its
// answers are kept. The gateway only forwards: it never opens RocksDB while
// an API poller or the REPL reads an ended run.
//
// Its interface, finished_run_reader_actor, is in runtime/net/interfaces.hpp.

#include <caf/all.hpp>

#include "runtime/net/interfaces.hpp"

namespace cerebro {

finished_run_reader_actor::behavior_type finished_run_reader(finished_run_reader_actor::pointer self);

// Spawns the reader in a thread of its own, linked to `gateway` (it ends with it).
finished_run_reader_actor spawn_finished_run_reader(caf::local_actor* gateway);

}  // namespace cerebro
