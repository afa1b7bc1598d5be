#pragma once
// A TCP relay in front of the coordinator's CAF middleman that refuses BASP
// frames claiming more than a limit. CAF 0.17 allocates a frame's whole
// payload (up to 4 GiB) as soon as it reads the header, before any of our
// validation runs; without TLS anyone who reaches the port could make the
// coordinator allocate that much. The guard listens on the user's address,
// relays each connection to the middleman on 127.0.0.1, and reads only the
// frame headers going to the coordinator: payloads stream through.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/base/status.hpp"

namespace cerebro {

struct FrameGuardConfig {
  std::string listen_host;
  uint16_t listen_port = 0;  // 0: any free port
  uint16_t target_port = 0;  // the middleman, on 127.0.0.1
  uint64_t max_payload_bytes = 0;
};

// Receives one line per refused frame or failed relay (may be empty: no log).
using FrameGuardLog = std::function<void(const std::string&)>;

class FrameGuard {
 public:
  // Binds (with SO_REUSEADDR, so a restarted coordinator gets its port back
  // past TIME_WAIT) and starts accepting. Fails with "cannot listen on
  // host:port: why".
  static Result<std::unique_ptr<FrameGuard>> start(const FrameGuardConfig& config, FrameGuardLog log);

  // Stops accepting, closes every relayed connection and joins all threads.
  ~FrameGuard();
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;

  // The bound port (the chosen one when listen_port was 0).
  uint16_t port() const;

  struct Impl;

 private:
  explicit FrameGuard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cerebro
