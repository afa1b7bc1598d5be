#include "tools/shared_options.hpp"

namespace cerebro::cli {

void add_tls_options(CLI::App& command, tls_options& tls) {
  command.add_option("--tls-cert", tls.certificate, "TLS: this node's certificate (PEM)");
  command.add_option("--tls-key", tls.key, "TLS: this node's private key (PEM)");
  command.add_option("--tls-ca", tls.ca_file, "TLS: the CA certificate every node's certificate is signed by (PEM)");
}

void add_token_file_option(CLI::App& command, std::string& token_file) {
  command.add_option("--token-file", token_file, "File holding the cluster's token")->required();
}

void add_cluster_options(CLI::App& command, std::string& cluster, std::string& token_file) {
  command.add_option("--cluster", cluster, "The coordinator's host:port")->capture_default_str();
  add_token_file_option(command, token_file);
}

void add_optional_cluster_options(CLI::App& command, std::string& cluster, std::string& token_file,
                                  const std::string& cluster_help) {
  command.add_option("--cluster", cluster, cluster_help);
  command.add_option("--token-file", token_file, "File holding the cluster's token (with --cluster)");
}

void add_connect_timeout_option(CLI::App& command, double& seconds) {
  command.add_option("--timeout", seconds, "Seconds to keep trying to connect")->capture_default_str();
}

}  // namespace cerebro::cli
