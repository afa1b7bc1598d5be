#include "actors/client.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <fmt/format.h>

#include "runtime/base/file_io.hpp"
#include "runtime/base/lifecycle.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// Errors that mean the gateway is out of reach rather than refusing.
bool connection_error(const caf::error& e) {
  return e == caf::sec::request_receiver_down || e == caf::sec::request_timeout ||
         e == caf::sec::cannot_connect_to_node || e == caf::sec::remote_lookup_failed;
}

}  // namespace

caf::expected<coordinator_actor> find_gateway(caf::actor_system& system, const GatewayAddress& at, double budget_s,
                                              const std::function<void(const std::string&)>& retrying) {
  auto start = Clock::now();
  double delay = 0.2;
  for (;;) {
    auto gateway = at.tls ? caf::openssl::remote_actor<coordinator_actor>(system, at.host, at.port)
                          : system.middleman().remote_actor<coordinator_actor>(at.host, at.port);
    if (gateway) return gateway;
    if (budget_s >= 0 && seconds_since(start) + delay > budget_s) return gateway.error();
    if (retrying)
      retrying(fmt::format("coordinator {}:{} not reachable ({}); retrying in {:.1f} s", at.host, at.port,
                           system.render(gateway.error()), delay));
    std::this_thread::sleep_for(millis(delay));
    delay = std::min(delay * 2, 5.0);
  }
}

Status write_run_files(const run_files& files, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(fmt::format("{}: cannot create the run directory: {}", dir, ec.message()));
  for (size_t i = 0; i < files.names.size() && i < files.contents.size(); ++i) {
    // The names come from the coordinator: never a path out of `dir`.
    if (!validate_run_file_path(files.names[i]).ok()) continue;
    auto path = std::filesystem::path(dir) / files.names[i];
    std::filesystem::create_directories(path.parent_path(), ec);  // tensorboard/config-N/
    if (ec) return Status::io_error(fmt::format("{}: cannot create: {}", path.parent_path().string(), ec.message()));
    auto written = write_file_atomically(path.string(), files.contents[i]);
    if (!written.ok()) return written.with_context("cannot write the run file");
  }
  return Status::ok_status();
}

Result<std::unique_ptr<Client>> Client::connect(caf::actor_system& system, const GatewayAddress& address,
                                                std::string token, double timeout_s) {
  auto gateway = find_gateway(system, address, timeout_s);
  if (!gateway)
    return Status::unavailable(fmt::format("cannot reach the coordinator at {}:{} after {:.0f} s: {}", address.host,
                                           address.port, timeout_s, system.render(gateway.error())));
  auto client = std::make_unique<Client>(system, *gateway, std::move(token));
  client->address_ = address;
  client->remote_ = true;
  return client;
}

Client::Client(caf::actor_system& system, coordinator_actor gateway, std::string token)
    : system_(system), gateway_(std::move(gateway)), token_(std::move(token)) {}

Client::~Client() = default;

std::string Client::where() const {
  return remote_ ? fmt::format("{}:{}", address_.host, address_.port) : std::string("embedded");
}

Status Client::reconnect(double timeout_s) {
  if (!remote_) return Status::failed_precondition("the embedded coordinator cannot be reconnected to");
  auto gateway = find_gateway(system_, address_, timeout_s);
  if (!gateway)
    return Status::unavailable(fmt::format("cannot reach the coordinator at {} after {:.0f} s: {}", where(), timeout_s,
                                           system_.render(gateway.error())));
  gateway_ = *gateway;
  lost_ = false;
  return Status::ok_status();
}

Status Client::failed(const caf::error& error) {
  if (connection_error(error)) {
    lost_ = true;
    return Status::unavailable(fmt::format("lost the coordinator at {} ({})", where(), system_.render(error)));
  }
  return to_status(error);  // keeps the code: unavailable means "ask again"
}

Result<nlohmann::json> Client::status() {
  lost_ = false;
  caf::scoped_actor self(system_);
  Result<nlohmann::json> out = Status::internal("no answer");
  self->request(gateway_, millis(request_timeout_s), status_atom::value, token_)
      .receive([&](const std::string& text) { out = nlohmann::json::parse(text); },
               [&](const caf::error& e) { out = failed(e); });
  return out;
}

Result<nlohmann::json> Client::dataset_json(dataset_request request) {
  lost_ = false;
  request.token = token_;
  caf::scoped_actor self(system_);
  Result<nlohmann::json> out = Status::internal("no answer");
  self->request(gateway_, millis(request_timeout_s), datasets_atom::value, std::move(request))
      .receive([&](const std::string& text) { out = nlohmann::json::parse(text); },
               [&](const caf::error& e) { out = failed(e); });
  return out;
}

Result<nlohmann::json> Client::datasets() {
  return dataset_json({"", static_cast<int32_t>(DatasetCommand::list), "", "", ""});
}

Result<nlohmann::json> Client::add_dataset(const std::string& name, const nlohmann::json& data,
                                           const std::string& upload_dir) {
  return dataset_json({"", static_cast<int32_t>(DatasetCommand::add), name, data.dump(), upload_dir});
}

Result<nlohmann::json> Client::remove_dataset(const std::string& name) {
  return dataset_json({"", static_cast<int32_t>(DatasetCommand::remove), name, "", ""});
}

Result<std::string> Client::submit_as(caf::scoped_actor& self, const std::string& spec_text,
                                      const std::string& spec_dir, const std::string& origin) {
  lost_ = false;
  Result<std::string> out = Status::internal("no answer");
  self->request(gateway_, millis(request_timeout_s), submit_atom::value,
                submit_request{token_, spec_text, spec_dir, origin, 0})
      .receive([&](const std::string& id) { out = id; }, [&](const caf::error& e) { out = failed(e); });
  return out;
}

Result<std::string> Client::submit(const std::string& spec_text, const std::string& spec_dir,
                                   const std::string& origin) {
  // A short-lived sender: the run's progress messages go to it and are
  // dropped, so submitting does not fill this client's mailbox.
  caf::scoped_actor self(system_);
  return submit_as(self, spec_text, spec_dir, origin);
}

Result<run_files> Client::run(const std::string& spec_text, const std::string& spec_dir, const std::string& origin,
                              const std::function<void(const std::string&)>& submitted,
                              const std::function<void(const progress_update&)>& progress) {
  caf::scoped_actor self(system_);  // receives the run's progress and files
  auto id = submit_as(self, spec_text, spec_dir, origin);
  if (!id.ok()) return id.status();
  if (submitted) submitted(*id);
  return follow(self, *id, progress);
}

Result<run_files> Client::attach(const std::string& experiment,
                                 const std::function<void(const nlohmann::json&)>& attached, const Progress& progress) {
  caf::scoped_actor self(system_);  // receives the run's progress and files
  auto reply = attach_as(self, experiment, request_timeout_s);
  if (!reply.ok()) return reply.status();
  if (attached) attached(*reply);
  return follow(self, experiment, progress);
}

Result<nlohmann::json> Client::attach_as(caf::scoped_actor& self, const std::string& experiment, double timeout_s) {
  lost_ = false;
  Result<nlohmann::json> out = Status::internal("no answer");
  self->request(gateway_, millis(timeout_s), attach_atom::value, token_, experiment)
      .receive([&](const std::string& reply) { out = nlohmann::json::parse(reply); },
               [&](const caf::error& e) { out = failed(e); });
  return out;
}

Result<run_files> Client::follow(caf::scoped_actor& self, const std::string& experiment, const Progress& progress) {
  auto event = [&](const std::string& line) {
    progress_update p;
    p.event = line;
    if (progress) progress(p);
  };
  self->monitor(gateway_);
  Result<run_files> out = Status::internal("no answer");
  bool running = true;
  self->receive_while(running)(
      [&](progress_atom, const progress_update& p) {
        if (progress) progress(p);
      },
      [&](files_atom, run_files& files) {
        if (files.experiment != experiment) return;
        out = std::move(files);
        running = false;
      },
      [&](const caf::down_msg& down) {
        if (down.source != gateway_.address()) return;
        if (!remote_) {
          out = Status::unavailable("the embedded coordinator stopped");
          running = false;
          return;
        }
        event("lost the coordinator; reconnecting (the experiment goes on there)");
        // Right after the connection closed, the middleman may still hand out
        // the dead coordinator's cached gateway: an attach that gets no
        // answer is retried until the restarted coordinator answers.
        auto start = Clock::now();
        for (;;) {
          auto left = reconnect_timeout_s - seconds_since(start);
          auto connected = left > 0 ? reconnect(left) : Status::unavailable("no time left");
          if (connected.ok()) {
            auto attached = attach_as(self, experiment, 5);
            if (attached.ok()) break;
            if (!lost_) {
              out = attached.status().with_context("reconnected, but cannot follow the experiment");
              running = false;
              return;
            }
          }
          if (seconds_since(start) > reconnect_timeout_s) {
            lost_ = true;
            out =
                Status::unavailable(fmt::format("lost the coordinator and could not reconnect within {:.0f} s; "
                                                "follow the experiment later with: cerebro attach --cluster {} {}",
                                                reconnect_timeout_s, where(), experiment));
            running = false;
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        self->monitor(gateway_);
        event("reconnected; following experiment " + experiment);
      });
  return out;
}

Result<nlohmann::json> Client::wait(const std::string& experiment,
                                    const std::function<void(const nlohmann::json&)>& changed) {
  int64_t last_done = -1;
  std::string last_front;  // several objectives: the Pareto front so far, as last seen
  for (;;) {
    auto s = status();
    if (!s.ok()) return s.status();
    auto id = experiment.empty() ? (*s)["latest"].get<std::string>() : experiment;
    if (id.empty()) return Status::not_found("no experiment has been submitted yet");
    const nlohmann::json* entry = nullptr;
    for (const auto& e : (*s)["experiments"])
      if (e["id"] == id) entry = &e;
    if (!entry) return Status::not_found(fmt::format("no experiment {}", id));
    const auto state = parse_experiment_status((*entry).value("status", ""));
    if (state != ExperimentStatus::running && state != ExperimentStatus::waiting) return *entry;
    auto done = (*entry)["units_done"].get<int64_t>();
    // The front can arrive after the units_done it belongs to (the follower
    // computes it behind the commit): a change of either is news.
    auto front = entry->contains("pareto") ? (*entry)["pareto"].dump() : std::string();
    if ((done != last_done || front != last_front) && changed) changed(*entry);
    last_done = done;
    last_front = std::move(front);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

Result<control_reply> Client::control(control_request request, double timeout_s) {
  request.token = token_;
  auto start = Clock::now();
  for (;;) {
    lost_ = false;
    caf::scoped_actor self(system_);
    Result<control_reply> out = Status::internal("no answer");
    self->request(gateway_, millis(timeout_s), control_atom::value, request)
        .receive([&](control_reply& reply) { out = std::move(reply); }, [&](const caf::error& e) { out = failed(e); });
    // An experiment still preparing its data or just finishing: ask again
    // in a moment (soon: a pause should land right after training starts).
    // A lost coordinator is unavailable too, but asking the same handle
    // again is no use: the caller reconnects.
    const bool transient = out.code() == StatusCode::unavailable && !lost_;
    if (!transient || seconds_since(start) > setup_wait_s) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<nlohmann::json> Client::control_json(control_request request) {
  // add and clone run a pilot pass on the coordinator: allow them longer.
  auto reply = control(std::move(request), std::max(request_timeout_s, 150.0));
  if (!reply.ok()) return reply.status();
  auto j = nlohmann::json::parse(reply->json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::internal("the coordinator sent a malformed answer");
  j["experiment"] = reply->experiment;
  return j;
}

Result<nlohmann::json> Client::pause(const std::string& experiment) {
  return control_json({"", experiment, SteeringCommand::pause, -1, {}, 0});
}
Result<nlohmann::json> Client::resume(const std::string& experiment) {
  return control_json({"", experiment, SteeringCommand::resume, -1, {}, 0});
}
Result<nlohmann::json> Client::stop(const std::string& experiment, ConfigId config) {
  return control_json({"", experiment, SteeringCommand::stop, config, {}, 0});
}
Result<nlohmann::json> Client::add(const std::string& experiment, const std::vector<std::string>& settings) {
  return control_json({"", experiment, SteeringCommand::add, -1, settings, 0});
}
Result<nlohmann::json> Client::clone(const std::string& experiment, ConfigId config,
                                     const std::vector<std::string>& settings) {
  return control_json({"", experiment, SteeringCommand::clone, config, settings, 0});
}
Result<nlohmann::json> Client::show(const std::string& experiment, ConfigId config) {
  return control_json({"", experiment, SteeringCommand::show, config, {}, 0});
}
Result<nlohmann::json> Client::top(const std::string& experiment, int32_t rows) {
  return control_json({"", experiment, SteeringCommand::top, -1, {}, rows});
}
Result<nlohmann::json> Client::configs(const std::string& experiment) {
  return control_json({"", experiment, SteeringCommand::configs, -1, {}, 0});
}
Result<nlohmann::json> Client::detail(const std::string& experiment) {
  return control_json({"", experiment, SteeringCommand::detail, -1, {}, 0});
}
Result<nlohmann::json> Client::units(const std::string& experiment, int64_t since) {
  return control_json({"", experiment, SteeringCommand::units, -1, {}, 0, since});
}

Result<control_reply> Client::exported(const std::string& experiment, ConfigId config) {
  return control({"", experiment, SteeringCommand::export_model, config, {}, 0}, std::max(request_timeout_s, 120.0));
}

Result<std::string> Client::model_file(const std::string& experiment, ConfigId config) {
  auto reply = exported(experiment, config);
  if (!reply.ok()) return reply.status();
  return std::move(reply->file);
}

Result<std::string> Client::run_file(const std::string& experiment, const std::string& name) {
  auto reply = control({"", experiment, SteeringCommand::run_file, -1, {name}, 0}, std::max(request_timeout_s, 120.0));
  if (!reply.ok()) return reply.status();
  return std::move(reply->file);
}

Result<nlohmann::json> Client::export_model(const std::string& experiment, ConfigId config, const std::string& path) {
  auto reply = exported(experiment, config);
  if (!reply.ok()) return reply.status();
  if (auto written = write_file_atomically(path, reply->file); !written.ok())
    return written.with_context("cannot write the model file");
  auto j = nlohmann::json::parse(reply->json, nullptr, false);
  if (j.is_discarded()) j = nlohmann::json::object();
  j["experiment"] = reply->experiment;
  j["path"] = path;
  return j;
}

}  // namespace cerebro
