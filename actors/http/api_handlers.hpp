#pragma once
// The API's endpoints (runtime/api/api_route.hpp) answered through a
// cerebro::Client: each asks the gateway what the REPL's command asks.
// Kept apart from the server (http_server.cpp), which only authenticates and
// routes.

#include <string>

#include "actors/client.hpp"
#include "runtime/api/api_route.hpp"
#include "runtime/api/ended_answers.hpp"
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

// One API request; `body` has passed the size cap. `spec_dir`: where a
// submitted spec's relative paths point. `ended` (may be null) keeps the
// answers of ended experiments.
ApiAnswer answer_api(Client& client, const api::Route& route, const std::string& body, const std::string& spec_dir,
                     api::EndedAnswers* ended = nullptr);

// POST /api/v1/datasets: `description` is {"name", "data"} as JSON; `upload_dir` the folder the form's
// files were written to ("" for a dataset registered by paths on the cluster). 201 with the dataset.
ApiAnswer answer_add_dataset(Client& client, const std::string& description, const std::string& upload_dir);

// GET /metrics: runtime/api/prometheus.hpp over the cluster's status and the
// experiments' unit logs.
ApiAnswer answer_metrics(Client& client);

}  // namespace cerebro
