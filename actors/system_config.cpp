#include "actors/system_config.hpp"

#include <chrono>
#include <filesystem>

#include <caf/openssl/all.hpp>

namespace cerebro {

std::string tls_options::problem() const {
  if (!enabled()) return {};
  if (certificate.empty() || key.empty() || ca_file.empty())
    return "TLS needs all of --tls-cert, --tls-key and --tls-ca";
  for (const auto& [flag, path] : {std::pair{"--tls-cert", certificate}, {"--tls-key", key}, {"--tls-ca", ca_file}}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::string(flag) + " " + path + ": no such file";
  }
  return {};
}

namespace {

// CAF's scheduler threads must not compete with training for the cores.
// CAF 0.17's defaults start max(cores, 4) of them, and after every message
// each one polls its queue 500 more times with 50 us sleeps (about 25 ms of
// wake-ups, measured as a few % of a core per thread on a 2-core VM while
// units train); heartbeats, progress and hops keep them there. Training runs
// in detached actors (own threads), so the scheduled actors (scheduler,
// runner, agent, data partitions) need little: two threads, and an idle one
// sleeps on its condition variable at once. A message from another thread
// wakes it; it wakes by itself only to steal work queued behind a busy
// thread's job, every 100 ms. On a node whose cores all train, each such
// wake-up preempts a training thread: at 10 ms the two threads woke 200
// times a second in every process, now 20. (A gang's wall time showed no
// difference beyond this VM's noise either way: docs/BENCHMARKS.md,
// "Data-parallel gangs".)
void quiet_scheduler_threads(caf::actor_system_config& config) {
  config.set("scheduler.max-threads", 2);
  config.set("work-stealing.aggressive-poll-attempts", 10);
  config.set("work-stealing.moderate-poll-attempts", 0);
  config.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(100)});
}

}  // namespace

cerebro_system_config::cerebro_system_config(system_role role, const tls_options& tls) {
  quiet_scheduler_threads(*this);
  register_message_types(*this);
  register_cluster_message_types(*this);
  if (role == system_role::embedded) return;
  load<caf::io::middleman>();
  if (tls.enabled()) {
    openssl_certificate = tls.certificate;
    openssl_key = tls.key;
    openssl_cafile = tls.ca_file;
    load<caf::openssl::manager>();
  }
}

}  // namespace cerebro
