#pragma once
// The CAF configuration every cerebro process uses: all message types
// registered, the middleman loaded where nodes talk to each other.

#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

enum class system_role { embedded, coordinator, agent, client };

// Mutual TLS between nodes (CAF's OpenSSL module): every node presents a
// certificate signed by the CA the others trust. All three or none.
struct tls_options {
  std::string certificate;  // PEM
  std::string key;          // PEM
  std::string ca_file;      // PEM of the CA that signed every node's certificate
  bool enabled() const { return !certificate.empty() || !key.empty() || !ca_file.empty(); }
  // Empty when usable; else what is missing or unreadable.
  std::string problem() const;
};

class cerebro_system_config : public caf::actor_system_config {
 public:
  explicit cerebro_system_config(system_role role, const tls_options& tls = {});
};

}  // namespace cerebro
