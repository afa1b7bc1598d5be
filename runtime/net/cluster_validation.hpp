#pragma once
// Checks on what peers send, before anything is allocated or written from it.
// A peer (agent or client) is not trusted: names become file paths, counts
// become allocations, so every field is bounded here.

#include <string>

#include "runtime/cluster/peer_checks.hpp"  // validate_name, validate_resources, tokens_equal
#include "runtime/net/cluster_messages.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// A run file's path relative to the run directory: names that pass
// validate_name joined by '/' (e.g. tensorboard/config-0/events.out.tfevents.1.host),
// so never a path out of the directory.
Status validate_run_file_path(const std::string& path);

Status validate_placement(const shard_placement& p);

// Reads a token file: the first line, without surrounding white space.
// Errors: missing, unreadable, empty, or readable by others (mode & 077).
Result<std::string> read_token_file(const std::string& path);

}  // namespace cerebro
