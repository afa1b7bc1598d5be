#pragma once
// The API's endpoints (runtime/api/api_route.hpp) answered through a
// cerebro::Client: each asks the gateway what the REPL's command asks.
// Kept apart from the server (http_server.cpp), which only authenticates and
// routes.

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "actors/client.hpp"
#include "runtime/api/api_route.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

struct ApiAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

// The HTTP status of a refusal, by its code: 400 bad input, 404 no such
// experiment or config, 503 not yet (setting up, finishing), 409 refused in
// the experiment's current state (ended, already paused), 500 otherwise.
int http_status_of(StatusCode code);

// The detail answers of experiments that have ended, which no longer change: a poll of a finished run
// of many configs is then its cluster entry's lookup and these bytes, not its detail decoded, merged and
// encoded again. Shared by the server's threads; holds at most `capacity` answers (the oldest go first).
class EndedAnswers {
 public:
  explicit EndedAnswers(size_t capacity = 64) : capacity_(capacity) {}
  std::optional<std::string> find(const std::string& experiment) const;
  void keep(const std::string& experiment, std::string body);

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, std::pair<uint64_t, std::string>> answers_;  // by experiment: (when kept, body)
  uint64_t kept_ = 0;
};

// One API request; `body` has passed the size cap. `spec_dir`: where a
// submitted spec's relative paths point. `ended` (may be null) keeps the
// answers of ended experiments.
ApiAnswer answer_api(Client& client, const api::Route& route, const std::string& body, const std::string& spec_dir,
                     EndedAnswers* ended = nullptr);

// GET /metrics: runtime/api/prometheus.hpp over the cluster's status and the
// experiments' unit logs.
ApiAnswer answer_metrics(Client& client);

}  // namespace cerebro
