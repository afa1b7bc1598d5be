#pragma once
// What the commands that talk to a coordinator share (run --cluster, attach,
// status, repl, bench --cluster): its address, the token, a client session,
// and following an experiment to its run files.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/client.hpp"
#include "actors/system_config.hpp"

namespace cerebro {

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;
};
// "host:port" (host may be empty: 127.0.0.1). Throws Error with a clear message.
Endpoint parse_endpoint(const std::string& text);

// The token in --token-file; an error when the option was not given.
Result<std::string> read_cluster_token(const std::string& token_file);

struct ClientOptions {
  std::string cluster = "127.0.0.1:7070";
  std::string token_file;
  double connect_timeout_s = 15;     // retry budget
  double reconnect_timeout_s = 120;  // after losing the coordinator mid-experiment
  tls_options tls;
};

// A client's connection to the coordinator's gateway (status, run --cluster).
struct ClientSession {
  ClientSession(const ClientOptions& o, std::string token);
  cerebro_system_config config;
  caf::actor_system system;
  std::unique_ptr<Client> client;
  std::string error;  // empty when connected
};

// Runs `call` (a Client call that follows an experiment) with a progress
// printer: progress lines and events as an embedded run shows them.
Result<run_files> follow(const std::string& metric,
                         const std::function<Result<run_files>(const Client::Progress&)>& call);

// Writes the run files the coordinator sent into out_dir and names the best;
// returns the exit code.
int save_run_files(const Result<run_files>& result, const std::string& experiment, const std::string& out_dir);

// What stops a following client before it connects: an occupied run
// directory, or TLS files that are missing.
std::string client_problem(const ClientOptions& o, const std::string& out_dir);

// Submits the spec to the coordinator, shows progress, writes the run files
// the coordinator sends back into out_dir.
int run_on_cluster(const ClientOptions& options, const std::string& spec_path, const std::string& out_dir);

}  // namespace cerebro
