#include "actors/http/http_server.hpp"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <httplib.h>  // with HTTPLIB_DEFINITIONS (actors/http/CMakeLists.txt)

#include <fmt/format.h>

#include "actors/client.hpp"
#include "actors/http/api_handlers.hpp"
#include "actors/http/dashboard_assets.hpp"
#include "runtime/api/api_auth.hpp"
#include "runtime/api/api_request.hpp"
#include "runtime/api/api_route.hpp"
#include "runtime/api/login_throttle.hpp"

namespace cerebro {

// The header a dashboard request carries with its POSTs: a page on another
// site cannot set it without a CORS preflight this server never grants, so a
// session cookie alone cannot steer (no cross-site request forgery).
constexpr const char* kCsrfHeader = "X-Cerebro-Request";

// The submission's route (runtime/api/api_route.hpp), read by its own handler as it arrives.
constexpr const char* kSubmissionPath = "/api/v1/experiments";
// Its other path that takes a form (a dataset's files).
constexpr const char* kDatasetsPath = "/api/v1/datasets";
// The API's requests with a body are read by its own handlers (api_with_body, submit).
constexpr const char* kApiBodies = "/api/";
// A multipart form's boundaries and part headers on top of its spec and files.
constexpr size_t kMultipartSlack = 64 * 1024;

// Debian's cpp-httplib (0.11, a shared library) listens with a backlog of 5
// (CPPHTTPLIB_LISTEN_BACKLOG, fixed when the library was built): 50 dashboards
// or scripts connecting at once overflow it, and a dropped handshake costs its
// client a 1 s retransmission (measured: p99 1.02 s under 50 pollers). Linux
// lets a second listen() on a listening socket set a new backlog, so the
// server's socket, found by its port, gets the system's maximum.
namespace {
void raise_listen_backlog(uint16_t port) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ignored)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int listening = 0;
    socklen_t length = sizeof(listening);
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || !listening) continue;
    sockaddr_storage address{};
    socklen_t address_length = sizeof(address);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_length) != 0) continue;
    uint16_t bound = 0;
    if (address.ss_family == AF_INET) bound = ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    if (address.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
    if (bound == port) ::listen(fd, SOMAXCONN);
  }
}
}  // namespace

struct HttpServer::Impl {
  caf::actor_system& system;
  coordinator_actor gateway;
  HttpServerOptions options;
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  uint16_t port = 0;
  bool tls = false;
  api::SessionTable sessions;
  std::unique_ptr<api::OneTimeToken> one_time;  // an embedded --ui's link
  api::LoginThrottle throttle;                  // wrong tokens at /login and in links, per address
  api::EndedAnswers ended;                      // the detail answers of ended experiments

  Impl(caf::actor_system& actor_system, coordinator_actor gateway_handle, HttpServerOptions server_options)
      : system(actor_system), gateway(std::move(gateway_handle)), options(std::move(server_options)) {}

  void reply(httplib::Response& res, const ApiAnswer& a) {
    res.status = a.status;
    res.set_content(a.body, a.content_type.c_str());
  }

  void unauthorized(const httplib::Request& req, httplib::Response& res) {
    const bool page = api::parse_http_method(req.method) == api::HttpMethod::get &&
                      api::site_page(req.path) == api::SitePage::dashboard;
    if (page) {  // a browser: to the login page
      res.status = 302;
      res.set_header("Location", "/login");
      return;
    }
    res.set_header("WWW-Authenticate", "Bearer realm=\"cerebro\"");
    reply(res, {401, api::error_json(401,
                                     "this server needs the cluster token: send \"Authorization: Bearer TOKEN\" "
                                     "or log in at /login")});
  }

  void log_in(httplib::Response& res) {
    res.status = 303;
    res.set_header("Set-Cookie", api::session_cookie(sessions.open(), tls));
    res.set_header("Location", "/");
  }

  void login_page(httplib::Response& res, int status, const std::string& problem) {
    const auto* page = find_dashboard_asset("/login.html");
    std::string html(page->data, page->size);
    auto at = html.find("<!--problem-->");
    if (at != std::string::npos) html.replace(at, 14, problem);
    res.status = status;
    res.set_content(html, "text/html; charset=utf-8");
  }

  // True (and the answer set: 429 with Retry-After) while the client's
  // address may not try a token: too many wrong ones lately.
  bool throttled(const httplib::Request& req, httplib::Response& res) {
    auto wait = throttle.retry_after_s(req.remote_addr, api::LoginThrottle::Clock::now());
    if (wait == 0) return false;
    res.set_header("Retry-After", std::to_string(wait));
    login_page(res, 429,
               fmt::format("<p class=\"problem\">Too many wrong tokens from your address: try again in "
                           "{} s.</p>",
                           wait));
    return true;
  }

  void refused_login(const httplib::Request& req, httplib::Response& res, const std::string& problem) {
    throttle.failed(req.remote_addr, api::LoginThrottle::Clock::now());
    login_page(res, 401, "<p class=\"problem\">" + problem + "</p>");
  }

  // A token in the page's address (the link `run --ui` prints, or the
  // cluster's token on a coordinator): logs the browser in, then the page is
  // at / without the token in the address.
  void link_login(const httplib::Request& req, httplib::Response& res) {
    if (throttled(req, res)) return;
    const auto presented = req.get_param_value("token");
    if (!one_time) {
      if (!api::same_token(presented, options.token))
        return refused_login(req, res, "The token in the address is not this server's.");
      throttle.succeeded(req.remote_addr);
      return log_in(res);
    }
    using Outcome = api::OneTimeToken::Outcome;
    switch (one_time->redeem(presented, api::OneTimeToken::Clock::now())) {
      case Outcome::accepted: throttle.succeeded(req.remote_addr); return log_in(res);
      case Outcome::spent:
        return refused_login(req, res,
                             "This link has been used: it logs one browser in, once. Log in with the API "
                             "token printed beside it.");
      case Outcome::expired:
        return refused_login(req, res,
                             "This link has expired (unused links last an hour). Log in with the API token "
                             "printed beside it.");
      case Outcome::wrong: break;
    }
    refused_login(req, res, "The token in the address is not this server's.");
  }

  api::Credential credential_of(const httplib::Request& req) {
    return api::authenticate(req.get_header_value("Authorization"), req.get_header_value("Cookie"), options.token,
                             sessions);
  }

  // What refused_credential() would let through, without answering.
  bool credential_accepted(const httplib::Request& req) {
    const auto credential = credential_of(req);
    return credential != api::Credential::none &&
           (credential != api::Credential::session || req.has_header(kCsrfHeader));
  }

  // True when the request's credential is refused, and answered: no token or session (401), or a
  // session's change without the dashboard's header (403).
  bool refused_credential(const httplib::Request& req, httplib::Response& res) {
    const auto credential = credential_of(req);
    if (credential == api::Credential::none) {
      unauthorized(req, res);
      return true;
    }
    if (credential == api::Credential::session && api::parse_http_method(req.method) != api::HttpMethod::get &&
        !req.has_header(kCsrfHeader)) {
      reply(res,
            {403, api::error_json(403, fmt::format("a request from the dashboard needs the {} header", kCsrfHeader))});
      return true;
    }
    return false;
  }

  // Reads and drops a refused body (at most api::kMaxBodyBytes: the pre-routing handler refused larger ones
  // unread).
  static void skip_body(const httplib::Request& req, const httplib::ContentReader& read) {
    size_t skipped = 0;
    auto skip = [&](const char*, size_t size) { return (skipped += size) <= api::kMaxBodyBytes; };
    if (req.is_multipart_form_data()) {
      read([](const httplib::MultipartFormData&) { return true; }, skip);
    } else {
      read(skip);
    }
  }

  void refuse_change(httplib::Response& res) {
    reply(res, {403, api::error_json(403,
                                     "this server only shows finished runs (cerebro ui): nothing can be "
                                     "submitted or steered through it")});
  }

  static void secure_headers(httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
  }

  // POST /api/v1/experiments and POST /api/v1/datasets, read here as they arrive: a body (at most
  // api::kMaxBodyBytes: a TOML spec, or a dataset's {"name", "data"}), or a multipart form of that text
  // (part `spec`, or `dataset`) and its files (parts `file`, each named by its relative path), written
  // to an upload directory of its own as they come (runtime/api/upload.hpp); the text's relative paths
  // then find them. False when the request was refused and answered here; a refusal keeps no file.
  bool read_form_or_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read,
                         api::FormKind kind, std::string& text, std::unique_ptr<api::Upload>& upload) {
    secure_headers(res);
    // A refused body is read past first, so the connection's next request starts where it should; a failed
    // read sets its own status, which the refusal then replaces.
    if (!credential_accepted(req)) {
      skip_body(req, read);
      refused_credential(req, res);
      return false;
    }
    if (options.read_only) {
      skip_body(req, read);
      refuse_change(res);
      return false;
    }
    Status failed;
    bool too_large = false;
    if (req.is_multipart_form_data()) {
      if (options.upload_dir.empty()) {
        skip_body(req, read);
        reply(res, {400, api::error_json(400, kind == api::FormKind::submission
                                                  ? "this server takes a submission's spec as the body, not files: "
                                                    "send the TOML spec alone"
                                                  : "this server takes no uploaded files: register a dataset by "
                                                    "its paths on the cluster")});
        return false;
      }
      auto created = api::Upload::create(options.upload_dir, options.upload_max_bytes, kind);
      if (!created.ok()) {
        reply(res, {500, api::error_json(500, created.error())});
        return false;
      }
      upload = std::move(created).value();
      // After a refusal the rest of the body is read and dropped (as the library drops a body over its own
      // limit), so the connection's next request starts where it should.
      size_t dropped = 0;
      auto drop = [&](size_t size) { return (dropped += size) <= options.upload_max_bytes + kMultipartSlack; };
      read(
          [&](const httplib::MultipartFormData& header) {
            if (failed.ok()) failed = upload->begin_part(header.name, header.filename);
            return true;
          },
          [&](const char* data, size_t size) {
            if (!failed.ok()) return drop(size);
            failed = upload->receive(data, size);
            return true;
          });
      if (failed.ok()) {
        auto form = upload->finish_form();
        if (form.ok()) text = std::move(form).value();
        failed = form.status();
      }
      too_large = upload->over_cap();
    } else {
      size_t dropped = 0;
      read([&](const char* data, size_t size) {
        too_large = too_large || text.size() + size > api::kMaxBodyBytes;
        if (too_large) return (dropped += size) <= options.upload_max_bytes + kMultipartSlack;
        text.append(data, size);
        return true;
      });
      if (too_large)
        failed = Status::invalid_argument(fmt::format("the body is larger than {} bytes", api::kMaxBodyBytes));
    }
    if (failed.ok()) return true;
    if (upload) upload->discard();
    const int status = too_large ? 413 : 400;
    reply(res, {status, api::error_json(status, failed.message())});
    return false;
  }

  void submit(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    std::string spec;
    std::unique_ptr<api::Upload> upload;
    if (!read_form_or_body(req, res, read, api::FormKind::submission, spec, upload)) return;
    auto client = make_client();
    auto answer = answer_api(*client, api::Route{api::Endpoint::submit_experiment}, spec,
                             upload ? upload->dir() : options.spec_dir);
    if (upload && answer.status != 201) upload->discard();
    reply(res, answer);
  }

  void add_dataset(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    std::string description;
    std::unique_ptr<api::Upload> upload;
    if (!read_form_or_body(req, res, read, api::FormKind::dataset, description, upload)) return;
    auto client = make_client();
    auto answer = answer_add_dataset(*client, description, upload ? upload->dir() : "");
    if (upload && answer.status != 201) upload->discard();
    reply(res, answer);
  }

  // A request under the API prefix with a body other than a submission: read here as it arrives, at most
  // api::kMaxBodyBytes; a larger one is read past and dropped (as the library drops a body over its own
  // limit, so the connection's next request starts where it should) and refused with 413.
  void api_with_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    if (req.is_multipart_form_data()) {
      skip_body(req, read);
      secure_headers(res);
      if (refused_credential(req, res)) return;
      return reply(res, {400, api::error_json(400,
                                              "only a submission (POST /api/v1/experiments) and a dataset "
                                              "(POST /api/v1/datasets) take a form")});
    }
    std::string body;
    bool too_large = false;
    size_t dropped = 0;
    read([&](const char* data, size_t size) {
      too_large = too_large || body.size() + size > api::kMaxBodyBytes;
      if (too_large) return (dropped += size) <= options.upload_max_bytes + kMultipartSlack;
      body.append(data, size);
      return true;
    });
    if (!too_large) return handle(req, res, body);
    secure_headers(res);
    if (refused_credential(req, res)) return;
    reply(res, {413, api::error_json(413, fmt::format("the body is larger than {} bytes", api::kMaxBodyBytes))});
  }

  void handle(const httplib::Request& req, httplib::Response& res) { handle(req, res, req.body); }

  void handle(const httplib::Request& req, httplib::Response& res, const std::string& body) {
    secure_headers(res);
    const api::HttpMethod method = api::parse_http_method(req.method);
    const api::SitePage page = api::site_page(req.path);
    // The login page and its form need no token.
    if (page == api::SitePage::login) {
      if (method == api::HttpMethod::post) {
        if (throttled(req, res)) return;
        if (!api::same_token(req.get_param_value("token"), options.token))
          return refused_login(req, res, "That is not the token.");
        throttle.succeeded(req.remote_addr);
        return log_in(res);
      }
      return login_page(res, 200, "");
    }
    if (method == api::HttpMethod::get && req.has_param("token") && page == api::SitePage::dashboard)
      return link_login(req, res);
    if (refused_credential(req, res)) return;
    if (options.read_only && method != api::HttpMethod::get) return refuse_change(res);
    if (page == api::SitePage::metrics && method == api::HttpMethod::get) {
      auto client = make_client();
      return reply(res, answer_metrics(*client));
    }
    if (req.path.rfind(api::kApiPrefix, 0) == 0) {
      auto match = api::match_route(req.method, req.path);
      if (!match.route) return reply(res, {match.http_status, api::error_json(match.http_status, match.error)});
      if (match.route->endpoint == api::Endpoint::get_units && req.has_param("since")) {
        auto since = api::parse_since(req.get_param_value("since"));
        if (!since.ok()) return reply(res, {400, api::error_json(400, since.error())});
        match.route->since = *since;
      }
      auto client = make_client();
      return reply(res, answer_api(*client, *match.route, body, options.spec_dir, &ended));
    }
    if (method == api::HttpMethod::get) {
      const auto* asset = find_dashboard_asset(page == api::SitePage::dashboard ? "/index.html" : req.path);
      if (asset) {
        res.set_content(std::string(asset->data, asset->size), asset->content_type);
        return;
      }
    }
    reply(res, {404, api::error_json(404, fmt::format("no such page: {} {}", req.method, req.path.substr(0, 200)))});
  }

  std::unique_ptr<Client> make_client() {
    auto client = std::make_unique<Client>(system, gateway, options.gateway_token);
    // An experiment setting up answers 503 at once: an HTTP thread never waits for it.
    client->setup_wait_s = 0;
    return client;
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::start(caf::actor_system& system, coordinator_actor gateway,
                                                      HttpServerOptions options) {
  if (options.token.empty()) return Status::invalid_argument("the HTTP server needs a token");
  auto impl = std::make_unique<Impl>(system, std::move(gateway), std::move(options));
  auto& o = impl->options;
  if (!o.one_time_token.empty())
    impl->one_time = std::make_unique<api::OneTimeToken>(o.one_time_token,
                                                         api::OneTimeToken::Clock::now() + api::kOneTimeTokenLifetime);
  if (!o.tls_certificate.empty() || !o.tls_key.empty()) {
    auto ssl = std::make_unique<httplib::SSLServer>(o.tls_certificate.c_str(), o.tls_key.c_str());
    if (!ssl->is_valid())
      return Status::invalid_argument(
          fmt::format("HTTPS: cannot load the certificate {} with the key {}", o.tls_certificate, o.tls_key));
    impl->server = std::move(ssl);
    impl->tls = true;
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  auto& server = *impl->server;
  const int threads = std::max(4, o.threads);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Larger bodies are refused (413) before they are read into memory: the pre-routing handler refuses a body
  // over api::kMaxBodyBytes but a submission's, which submit() reads as it arrives and caps itself.
  server.set_payload_max_length(std::max(api::kMaxBodyBytes, o.upload_max_bytes + kMultipartSlack));
  server.set_read_timeout(10, 0);
  server.set_write_timeout(10, 0);
  server.set_keep_alive_timeout(5);
  auto* self = impl.get();
  auto handler = [self](const httplib::Request& req, httplib::Response& res) { self->handle(req, res); };
  server.Get(".*", handler);
  server.Post(kSubmissionPath, [self](const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& read) { self->submit(req, res, read); });
  server.Post(kDatasetsPath, [self](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& read) { self->add_dataset(req, res, read); });
  auto api_with_body = [self](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    self->api_with_body(req, res, read);
  };
  const std::string api_paths = std::string(kApiBodies) + ".*";
  server.Post(api_paths, api_with_body);
  server.Put(api_paths, api_with_body);
  server.Delete(api_paths, api_with_body);
  server.Patch(api_paths, api_with_body);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Delete(".*", handler);
  server.Patch(".*", handler);
  // cpp-httplib reads the body of a POST, PUT, PATCH or DELETE that has neither a Content-Length nor chunked
  // encoding until the client closes the connection, and answers 400 when its read times out first: a
  // bodiless `curl -X POST` (no Content-Length) waited 10 s for "HTTP error 400". Such a request has no
  // body by HTTP's own rule (RFC 9112, 6.3): it is answered here, before the library reads, as one with
  // an empty body (a GET without one goes the same way, to the same handler).
  //
  // A request with a body: only a submission's may be larger than api::kMaxBodyBytes or arrive in chunks,
  // and only an authenticated client's submission is read at all.
  server.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    using Answer = httplib::Server::HandlerResponse;
    const bool chunked = req.has_header("Transfer-Encoding");
    if (!req.has_header("Content-Length") && !chunked) {
      self->handle(req, res, "");
      return Answer::Handled;
    }
    // A body left unread here would be read as the connection's next request, which then fails and ends
    // the connection. The API's own handlers read theirs (and past what they refuse); only a large
    // submission without the token, and a large body outside the API (none is taken there), are refused
    // unread.
    const auto length = req.get_header_value<uint64_t>("Content-Length");
    if (api::parse_http_method(req.method) == api::HttpMethod::post &&
        (req.path == kSubmissionPath || req.path == kDatasetsPath)) {
      if ((chunked || length > api::kMaxBodyBytes) && self->refused_credential(req, res)) {
        Impl::secure_headers(res);
        return Answer::Handled;
      }
      return Answer::Unhandled;
    }
    if (req.path.rfind(kApiBodies, 0) == 0) return Answer::Unhandled;
    if (chunked || length > api::kMaxBodyBytes) {
      Impl::secure_headers(res);
      const int status = chunked ? 411 : 413;
      self->reply(res, {status, api::error_json(status, chunked ? std::string("send the body with a Content-Length")
                                                                : fmt::format("the body is larger than {} bytes",
                                                                              api::kMaxBodyBytes))});
      return Answer::Handled;
    }
    return Answer::Unhandled;
  });
  server.set_error_handler([self](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const size_t cap =
        req.path == kSubmissionPath || req.path == kDatasetsPath ? self->options.upload_max_bytes : api::kMaxBodyBytes;
    auto message = res.status == 413 ? fmt::format("the body is larger than {} bytes", cap)
                   : res.status == 400
                       ? std::string("the request is malformed, or its body did not arrive whole in time")
                       : fmt::format("HTTP error {}", res.status);
    res.set_content(api::error_json(res.status, message), "application/json");
  });
  int port =
      o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host.c_str(), o.port) ? o.port : -1);
  if (port <= 0) return Status::unavailable(fmt::format("cannot listen for HTTP on {}:{}", o.host, o.port));
  impl->port = static_cast<uint16_t>(port);
  raise_listen_backlog(impl->port);
  impl->thread = std::thread([self] { self->server->listen_after_bind(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->port; }

std::string HttpServer::url() const {
  // A server listening on every address (0.0.0.0) is reached on this machine at the loopback one.
  in_addr address{};
  const bool any = inet_pton(AF_INET, impl_->options.host.c_str(), &address) == 1 && address.s_addr == INADDR_ANY;
  auto host = any ? std::string("127.0.0.1") : impl_->options.host;
  return fmt::format("{}://{}:{}/", impl_->tls ? "https" : "http", host, impl_->port);
}

std::string HttpServer::login_url() const {
  return url() + "?token=" + (impl_->one_time ? impl_->one_time->token() : impl_->options.token);
}

void HttpServer::stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace cerebro
