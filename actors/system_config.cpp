#include "actors/system_config.hpp"

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

cerebro_system_config::cerebro_system_config(system_role role, const tls_options& tls) {
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
