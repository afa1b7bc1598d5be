#pragma once
// Checks on what peers send, before anything is allocated or written from it.
// A peer (agent or client) is not trusted: names become file paths, counts
// become allocations, so every field is bounded here.

#include <string>

#include "runtime/net/cluster_messages.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// Names of agents and experiments: 1..64 characters of [A-Za-z0-9._-], not
// starting with '.', so they are safe as file and directory names.
Status validate_name(const std::string& what, const std::string& name);
// A run file's path relative to the run directory: names that pass
// validate_name joined by '/' (e.g. tensorboard/config-0/events.out.tfevents.1.host),
// so never a path out of the directory.
Status validate_run_file_path(const std::string& path);

Status validate_resources(const agent_resources& r);
Status validate_placement(const shard_placement& p);

// Compares a presented token with the expected one in time independent of
// where they differ (and of the presented token's length).
bool tokens_equal(const std::string& presented, const std::string& expected);

// Reads a token file: the first line, without surrounding white space.
// Errors: missing, unreadable, empty, or readable by others (mode & 077).
Result<std::string> read_token_file(const std::string& path);

}  // namespace cerebro
