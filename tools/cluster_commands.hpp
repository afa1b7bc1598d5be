#pragma once
// The multi-node subcommands: coordinator, agent, status, and `run --cluster`.

#include <cstdint>
#include <string>

#include "actors/system_config.hpp"

namespace cerebro {

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;
};
// "host:port" (host may be empty: 127.0.0.1). Throws Error with a clear message.
Endpoint parse_endpoint(const std::string& text);

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:7070";
  std::string state_dir;
  std::string token_file;
  double heartbeat_timeout_s = 10;
  // Without TLS, the largest message a peer may send (the frame guard's limit).
  int max_message_mb = 1024;
  tls_options tls;
};
int coordinator_main(const CoordinatorOptions& options);

struct AgentOptions {
  std::string join = "127.0.0.1:7070";
  std::string token_file;
  int workers = 1;
  std::string data_dir;
  std::string name;
  int threads_per_worker = 1;
  tls_options tls;
};
int agent_main(const AgentOptions& options);

struct ClientOptions {
  std::string cluster = "127.0.0.1:7070";
  std::string token_file;
  double connect_timeout_s = 15;    // retry budget
  double reconnect_timeout_s = 120;  // after losing the coordinator mid-experiment
  tls_options tls;
};
int status_main(const ClientOptions& options);
// Submits the spec to the coordinator, shows progress, writes the run files
// the coordinator sends back into out_dir.
int run_on_cluster(const ClientOptions& options, const std::string& spec_path, const std::string& out_dir);
// Follows an experiment already on the coordinator (e.g. after the client or
// the coordinator restarted) and writes its run files into out_dir.
int attach_main(const ClientOptions& options, const std::string& experiment, const std::string& out_dir);

}  // namespace cerebro
