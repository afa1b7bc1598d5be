#pragma once
// Option groups that several subcommands declare alike, declared once here so
// that their names, help texts and defaults cannot drift apart.

#include <string>

#include <CLI/CLI.hpp>

#include "actors/system_config.hpp"

namespace cerebro::cli {

// --tls-cert/--tls-key/--tls-ca on every subcommand that talks to a cluster.
void add_tls_options(CLI::App& command, tls_options& tls);

// --token-file, required: the cluster's token (agent, attach, status).
void add_token_file_option(CLI::App& command, std::string& token_file);

// --cluster HOST:PORT (default shown) and a required --token-file: the
// subcommands that only talk to a running coordinator (attach, status).
void add_cluster_options(CLI::App& command, std::string& cluster, std::string& token_file);

// --cluster HOST:PORT and --token-file for subcommands that use an embedded
// cluster unless --cluster names a coordinator (run, repl); cluster_help says
// what --cluster does for this one.
void add_optional_cluster_options(CLI::App& command, std::string& cluster, std::string& token_file,
                                  const std::string& cluster_help);

// --timeout: how long a client keeps trying to connect (status, repl).
void add_connect_timeout_option(CLI::App& command, double& seconds);

}  // namespace cerebro::cli
