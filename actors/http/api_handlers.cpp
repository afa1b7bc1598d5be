#include "actors/http/api_handlers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/api/api_request.hpp"
#include "runtime/api/prometheus.hpp"
#include "runtime/base/version.hpp"

namespace cerebro {

namespace {

ApiAnswer error_answer(int status, const std::string& message) { return {status, api::error_json(status, message)}; }

ApiAnswer refused(const Status& status) { return error_answer(http_status_of(status.code()), status.message()); }

ApiAnswer ok(const nlohmann::json& j, int status = 200) { return {status, j.dump()}; }

// The experiment's entry in the cluster status (id, name, status, progress).
nlohmann::json summary_of(const nlohmann::json& e) {
  double total = e.value("units_total", 0.0);
  nlohmann::json out = e;
  out["progress"] = total > 0 ? e.value("units_done", 0.0) / total : 0.0;
  return out;
}

Result<nlohmann::json> find_experiment(Client& client, const std::string& id) {
  auto status = client.status();
  if (!status.ok()) return status.status();
  for (const auto& e : (*status)["experiments"])
    if (e.value("id", "") == id) return summary_of(e);
  return Status::not_found(fmt::format("no experiment {}", id));
}

ApiAnswer list_experiments(Client& client) {
  auto status = client.status();
  if (!status.ok()) return refused(status.status());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : (*status)["experiments"]) list.push_back(summary_of(e));
  return ok({{"experiments", list}, {"latest", (*status)["latest"]}});
}

bool has_ended(const nlohmann::json& entry) {
  const auto status = entry.value("status", "");
  return status == to_string(ExperimentStatus::completed) || status == to_string(ExperimentStatus::failed);
}

ApiAnswer get_experiment(Client& client, const std::string& id, api::EndedAnswers* ended) {
  auto entry = find_experiment(client, id);
  if (!entry.ok()) return refused(entry.status());
  const bool final_answer = ended && has_ended(*entry);
  if (final_answer)
    if (auto kept = ended->find(id)) return {200, std::move(*kept)};
  auto detail = client.detail(id);
  nlohmann::json out = *entry;
  if (detail.ok()) {
    for (auto& [key, value] : detail->items()) out[key] = value;
  } else if (detail.code() == StatusCode::unavailable) {
    // Still preparing its data (or finishing): the summary alone, and why.
    out["configs"] = nlohmann::json::array();
    out["best"] = nullptr;
    out["note"] = detail.error();
  } else if (!has_ended(*entry) && (detail.code() == StatusCode::io_error || detail.code() == StatusCode::not_found)) {
    // Set up before its state store is written (or failing there, which its status soon says): the
    // summary alone; the store's own error would name the server's files.
    out["configs"] = nlohmann::json::array();
    out["best"] = nullptr;
    out["note"] = "setting up: the experiment has no state to read yet";
  } else if (entry->value("status", "") == to_string(ExperimentStatus::failed)) {
    // Failed before it kept anything to read (its data or setup): its status and the reason, which the
    // entry has; not the store's own error, which names the server's files.
    out["configs"] = nlohmann::json::array();
    out["best"] = nullptr;
  } else {
    return refused(detail.status());
  }
  // The book's count, which units_total and progress come from: the log's count (the detail's) also has
  // a unit that finished after its config was stopped, which the book no longer plans.
  if (entry->contains("units_done")) out["units_done"] = (*entry)["units_done"];
  auto answer = ok(out);
  if (final_answer && detail.ok()) ended->keep(id, answer.body);
  return answer;
}

ApiAnswer with_experiment(Result<nlohmann::json> answer, int status = 200) {
  if (!answer.ok()) return refused(answer.status());
  return ok(*answer, status);
}

// A file's bytes with its type, or the refusal.
ApiAnswer download(Result<std::string> file, api::RunFile kind) {
  if (!file.ok()) return refused(file.status());
  return {200, std::move(file).value(), api::content_type_of(kind)};
}

}  // namespace

int http_status_of(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return 200;
    case StatusCode::invalid_argument: return 400;
    case StatusCode::not_found: return 404;
    case StatusCode::permission_denied: return 403;
    case StatusCode::unavailable: return 503;
    case StatusCode::unknown:  // the gateway's refusals: "already paused", "has ended"
    case StatusCode::failed_precondition: return 409;
    default: return 500;
  }
}

ApiAnswer answer_api(Client& client, const api::Route& route, const std::string& body, const std::string& spec_dir,
                     api::EndedAnswers* ended) {
  using api::Endpoint;
  const auto& id = route.experiment;
  switch (route.endpoint) {
    case Endpoint::list_experiments: return list_experiments(client);
    case Endpoint::submit_experiment: {
      if (auto checked = api::check_spec_body(body); !checked.ok()) return refused(checked);
      constexpr const char* kOrigin = "the request body";
      auto submitted = client.submit(body, spec_dir, kOrigin);
      if (!submitted.ok()) {
        // The gateway's spec parser names the key and line: as text, and as fields a client can point with.
        auto code = submitted.code() == StatusCode::unknown ? StatusCode::failed_precondition : submitted.code();
        if (code != StatusCode::invalid_argument) return refused(Status::of(code, submitted.error()));
        return ok({{"error", submitted.error()},
                   {"status", 400},
                   {"problems", api::spec_problems(submitted.error(), kOrigin)}},
                  400);
      }
      return ok({{"id", *submitted}}, 201);
    }
    case Endpoint::get_experiment: return get_experiment(client, id, ended);
    case Endpoint::get_status: {
      // The entry alone, without the state store's detail: a poll that costs the server next to nothing.
      auto entry = find_experiment(client, id);
      if (!entry.ok()) return refused(entry.status());
      if (entry->value("status", "") == to_string(ExperimentStatus::running) && entry->value("units_total", 0) == 0)
        (*entry)["note"] = "setting up: preparing and placing its data";
      return ok(*entry);
    }
    case Endpoint::get_units: return with_experiment(client.units(id, route.since));
    case Endpoint::get_config: return with_experiment(client.show(id, route.config));
    case Endpoint::pause: return with_experiment(client.pause(id));
    case Endpoint::resume: return with_experiment(client.resume(id));
    case Endpoint::stop_config: return with_experiment(client.stop(id, route.config));
    case Endpoint::clone_config:
    case Endpoint::add_config: {
      const bool clone = route.endpoint == Endpoint::clone_config;
      auto settings = api::settings_from_body(body, clone);
      if (!settings.ok()) return refused(settings.status());
      // The experiment is named in the path: an empty id would mean "the latest".
      return with_experiment(clone ? client.clone(id, route.config, *settings) : client.add(id, *settings), 201);
    }
    case Endpoint::list_agents: {
      auto status = client.status();
      if (!status.ok()) return refused(status.status());
      return ok({{"agents", (*status)["agents"]}});
    }
    case Endpoint::cluster: {
      auto status = client.status();
      if (!status.ok()) return refused(status.status());
      nlohmann::json out = *status;
      out["experiments"] = nlohmann::json::array();
      for (const auto& e : (*status)["experiments"]) out["experiments"].push_back(summary_of(e));
      return ok(out);
    }
    case Endpoint::version: return ok({{"version", cerebro_version()}, {"api", "v1"}});
    case Endpoint::config_model: return download(client.model_file(id, route.config), api::RunFile::best_model);
    case Endpoint::best_model:
    case Endpoint::run_file: return download(client.run_file(id, api::to_string(route.file)), route.file);
    case Endpoint::list_datasets: return with_experiment(client.datasets());
    case Endpoint::add_dataset: return answer_add_dataset(client, body, "");
    case Endpoint::remove_dataset: return with_experiment(client.remove_dataset(route.name));
  }
  return error_answer(500, "unhandled endpoint");
}

ApiAnswer answer_add_dataset(Client& client, const std::string& description, const std::string& upload_dir) {
  const auto j = nlohmann::json::parse(description, nullptr, false);
  const auto name = j.is_object() ? j.find("name") : j.end();
  const auto data = j.is_object() ? j.find("data") : j.end();
  if (name == j.end() || !name->is_string() || data == j.end() || !data->is_object())
    return error_answer(400,
                        "a dataset is registered with {\"name\": \"NAME\", \"data\": {its [data] keys}} as JSON "
                        "(docs/API.md \"Datasets\")");
  return with_experiment(client.add_dataset(name->get<std::string>(), *data, upload_dir), 201);
}

ApiAnswer answer_metrics(Client& client) {
  auto status = client.status();
  if (!status.ok()) return refused(status.status());
  std::map<std::string, nlohmann::json> units;
  for (const auto& e : (*status)["experiments"]) {
    auto id = e.value("id", "");
    auto log = client.units(id);
    // An experiment still setting up has no units yet; one that cannot be
    // read is left out of this scrape rather than failing it.
    if (log.ok()) units[id] = (*log)["units"];
  }
  return {200, api::render_metrics(*status, units), api::kPrometheusContentType};
}

}  // namespace cerebro
