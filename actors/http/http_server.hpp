#pragma once
// The HTTP API and the dashboard (docs/API.md): a thin shell over
// cpp-httplib. Every request is matched against the route table
// (runtime/api/api_route.hpp), authenticated (runtime/api/api_auth.hpp) and
// answered by asking the coordinator's gateway through cerebro::Client, the
// same messages the REPL sends: steering through the API is the REPL's
// steering, recorded the same way. The server holds no experiment state.
//
// Served by `cerebro coordinator --http HOST:PORT` (the cluster's token,
// HTTPS with the coordinator's certificate) and by `cerebro run --ui` and
// `cerebro repl --ui` (a random token printed in the URL, as Jupyter does).

#include <cstdint>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "runtime/api/upload.hpp"
#include "runtime/base/status.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (port() says which)
  // What every request must present (Bearer, or the login page's session).
  std::string token;
  // Set (an embedded --ui): the token of the printed link, which logs one
  // browser in once and is then spent (api::OneTimeToken; unused it expires
  // after api::kOneTimeTokenLifetime). The link then carries it instead of
  // `token`, which a URL never takes.
  std::string one_time_token;
  // The gateway's token (the cluster's; an embedded cluster's own).
  std::string gateway_token;
  // Both set: HTTPS with this certificate and key (PEM).
  std::string tls_certificate, tls_key;
  // Relative paths in a submitted spec are relative to this directory.
  std::string spec_dir = ".";
  // Reads only (`cerebro ui`): every request that would change something is refused (403).
  bool read_only = false;
  // Where a submission's files go, each submission in a directory of its own (runtime/api/upload.hpp),
  // and how many bytes one may bring; empty: a submission brings no files.
  std::string upload_dir;
  size_t upload_max_bytes = api::kDefaultUploadMaxBytes;
  int threads = 64;  // concurrent connections served (each poller holds one)
};

class HttpServer {
 public:
  // Binds and starts serving in background threads; an error names the
  // address or the certificate that failed.
  static Result<std::unique_ptr<HttpServer>> start(caf::actor_system& system, coordinator_actor gateway,
                                                   HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;
  // "http://host:port/" (https with TLS).
  std::string url() const;
  // The URL that logs a browser in: url() with ?token=... (the one-time
  // token when there is one).
  std::string login_url() const;
  void stop();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cerebro
