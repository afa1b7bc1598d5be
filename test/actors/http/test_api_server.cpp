// The HTTP API of a real coordinator (`cerebro coordinator --http`) with one
// agent, on a small Fashion-MNIST experiment: every endpoint, the token on
// every request, bad and oversized bodies that change nothing, steering
// through the API seen by the REPL and the other way round, /metrics; and
// HTTPS with the coordinator's certificate.
#define BOOST_TEST_MODULE api_server
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include <httplib.h>  // with HTTPLIB_DEFINITIONS (test/actors/http/http.cmake)
#include <nlohmann/json.hpp>

#include "test/support/cluster_util.hpp"

using namespace cerebro::e2e;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kToken = "s3cret-token-for-tests-0123";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The port the coordinator printed ("http on http://127.0.0.1:PORT/").
int http_port(const ChildProcess& coordinator) {
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("http on ", 20), coordinator.log());
  std::smatch m;
  auto log = coordinator.log();
  BOOST_REQUIRE(std::regex_search(log, m, std::regex("http on https?://127\\.0\\.0\\.1:([0-9]+)/")));
  return std::stoi(m[1]);
}

struct Api {
  explicit Api(int port) : http("127.0.0.1", port) { http.set_read_timeout(60, 0); }
  httplib::Headers auth(const std::string& token = kToken) { return {{"Authorization", "Bearer " + token}}; }
  httplib::Result get(const std::string& path) { return http.Get(path.c_str(), auth()); }
  httplib::Result post(const std::string& path, const std::string& body = "",
                       const std::string& type = "application/json") {
    return http.Post(path.c_str(), auth(), body, type.c_str());
  }
  json get_json(const std::string& path) {
    auto r = get(path);
    BOOST_REQUIRE_MESSAGE(r, path);
    BOOST_REQUIRE_MESSAGE(r->status == 200, path + ": " + std::to_string(r->status) + " " + r->body);
    return json::parse(r->body);
  }
  httplib::Client http;
};

// The error answer: JSON with the status and a message containing `part`.
void expect_error(const httplib::Result& r, int status, const std::string& part) {
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == status, r->body);
  auto j = json::parse(r->body, nullptr, false);
  BOOST_TEST(!j.is_discarded(), "an error is JSON: " + r->body);
  if (j.is_discarded()) return;
  BOOST_TEST(j.value("status", 0) == status);
  BOOST_TEST(has(j.value("error", ""), part), j.dump());
}

size_t config_count(Api& api, const std::string& id) {
  return api.get_json("/api/v1/experiments/" + id)["configs"].size();
}

std::string config_status(Api& api, const std::string& id, int config) {
  auto experiment = api.get_json("/api/v1/experiments/" + id);
  for (const auto& c : experiment["configs"])
    if (c["config"] == config) return c["status"];
  return "absent from " + experiment.dump();
}

// The listen backlog of the socket on 127.0.0.1:port, as `ss` (iproute2)
// reports it: for a listening socket its Send-Q column is the backlog.
int listen_backlog(int port) {
  std::string command = "ss -ltnH 'sport = :" + std::to_string(port) + "' 2>&1";
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[512];
    while (std::fgets(buffer, sizeof(buffer), pipe)) out += buffer;
    ::pclose(pipe);
  }
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(out, m, std::regex("LISTEN\\s+[0-9]+\\s+([0-9]+)")), command + ": " + out);
  return std::stoi(m[1]);
}

const char* slow = "CEREBRO_FAULT_INJECTION_ENABLE=i-am-a-test";
const char* slow_faults = "CEREBRO_FAULTS=slow_worker=0:10";

}  // namespace

BOOST_AUTO_TEST_CASE(every_endpoint_with_the_token_and_none_without) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port, {"--http", "127.0.0.1:0"});
  Api api(http_port(coordinator));
  cluster.start_agent("node1", port, std::vector<std::string>{slow, slow_faults});
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent node1 joined", 60), cluster.logs());
  // Many dashboards or scripts connect at once: cpp-httplib's own backlog of 5
  // dropped handshakes under 50 pollers (a 1 s retransmission each).
  BOOST_TEST(listen_backlog(http_port(coordinator)) >= 128);

  // No token, a wrong one, a forged cookie: 401 and no data, no steering.
  for (const char* path : {"/api/v1/experiments", "/api/v1/agents", "/metrics", "/app.js"}) {
    expect_error(api.http.Get(path), 401, "needs the cluster token");
    expect_error(api.http.Get(path, api.auth("wrong-token")), 401, "needs the cluster token");
    expect_error(api.http.Get(path, {{"Cookie", "cerebro_session=forged"}}), 401, "needs the cluster token");
  }
  expect_error(api.http.Post("/api/v1/experiments", "x", "text/plain"), 401, "needs the cluster token");
  auto page = api.http.Get("/");
  BOOST_REQUIRE(page);
  BOOST_TEST(page->status == 302, "a browser goes to the login page");
  BOOST_TEST(page->get_header_value("Location") == "/login");

  // Submitting: a bad spec, an empty and an oversized body are refused and start nothing.
  auto bad_spec = api.post("/api/v1/experiments", "[experiment]\nname = 3\nlrr = 1\n", "application/toml");
  expect_error(bad_spec, 400, "name");
  // Each problem also as fields a client can point with: the key, its line and column.
  auto problems = json::parse(bad_spec->body)["problems"];
  BOOST_REQUIRE_MESSAGE(problems.size() >= 2u, bad_spec->body);
  BOOST_TEST(problems[0]["key"] == "[experiment] name", problems.dump());
  BOOST_TEST(problems[0]["line"] == 2);
  BOOST_TEST(problems[0]["column"] == 8);
  BOOST_TEST(problems[0]["message"].get<std::string>().rfind("[experiment] name must be", 0) == 0u, problems.dump());
  BOOST_TEST(problems[1]["key"] == "[experiment] lrr", problems.dump());
  BOOST_TEST(problems[1]["line"] == 3);
  expect_error(api.post("/api/v1/experiments", "", "application/toml"), 400, "the body is empty");
  expect_error(api.post("/api/v1/experiments", std::string((1 << 20) + 10, '#'), "application/toml"), 413,
               "larger than");
  BOOST_TEST(api.get_json("/api/v1/experiments")["experiments"].empty(), "nothing was submitted");
  auto spec = small_spec("model = [\"mlp\"]\nhidden = [[32]]\nlr = [0.002, 0.001]\n", 2, 2000, 1);
  auto submitted = api.post("/api/v1/experiments", spec, "application/toml");
  BOOST_REQUIRE(submitted);
  BOOST_REQUIRE_MESSAGE(submitted->status == 201, submitted->body);
  auto id = json::parse(submitted->body)["id"].get<std::string>();
  BOOST_TEST(has(id, "small-"));
  const auto base = "/api/v1/experiments/" + id;

  // Pause as soon as its data is placed (503 until then).
  auto paused = api.post(base + "/pause");
  for (int i = 0; i < 600 && paused && paused->status == 503; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    paused = api.post(base + "/pause");
  }
  BOOST_REQUIRE(paused);
  BOOST_REQUIRE_MESSAGE(paused->status == 200, paused->body);
  BOOST_TEST(json::parse(paused->body)["paused"] == true);
  expect_error(api.post(base + "/pause"), 409, "already paused");

  // Reading: the list, the experiment, its units, a config, the agents, the cluster.
  auto list = api.get_json("/api/v1/experiments")["experiments"];
  BOOST_REQUIRE(list.size() == 1u);
  BOOST_TEST(list[0]["id"] == id);
  BOOST_TEST(list[0]["name"] == "small");
  BOOST_TEST(list[0]["status"] == "running");
  BOOST_TEST(list[0].contains("progress"));
  auto experiment = api.get_json(base);
  BOOST_TEST(experiment["paused"] == true);
  BOOST_TEST(experiment["metric"] == "val_accuracy");
  BOOST_TEST(has(experiment["spec"].get<std::string>(), "[experiment]"));
  BOOST_REQUIRE(experiment["configs"].size() == 2u);
  BOOST_TEST(experiment["configs"][0]["params"]["model"] == "mlp");
  BOOST_TEST(experiment["configs"][0].contains("epochs"));
  BOOST_TEST(api.get_json(base + "/units").contains("units"));
  BOOST_TEST(api.get_json(base + "/configs/1")["status"] == "running");
  expect_error(api.get(base + "/configs/42"), 404, "has no config 42");
  auto agents = api.get_json("/api/v1/agents")["agents"];
  BOOST_REQUIRE(agents.size() == 1u);
  BOOST_TEST(agents[0]["name"] == "node1");
  BOOST_TEST(agents[0]["workers"] == 1);
  BOOST_TEST(agents[0]["speed"].get<double>() > 0);
  BOOST_TEST(agents[0].contains("running"));
  BOOST_TEST(api.get_json("/api/v1/cluster")["experiments"].size() == 1u);
  expect_error(api.get("/api/v1/experiments/no-such-1"), 404, "no experiment no-such-1");
  expect_error(api.post("/api/v1/experiments/no-such-1/pause"), 404, "no experiment no-such-1");
  expect_error(api.get("/api/v1/nothing"), 404, "no such endpoint");
  expect_error(api.http.Delete(base.c_str(), api.auth()), 405, "not allowed");

  // Bad bodies change nothing.
  expect_error(api.post(base + "/configs/0/clone", "{\"params\": "), 400, "not valid JSON");
  expect_error(api.post(base + "/configs/0/clone", "{\"params\": {}}"), 400, "at least one parameter");
  expect_error(api.post(base + "/configs/0/clone", "{\"params\": {\"lr\": {\"x\": 1}}}"), 400, "params.lr");
  expect_error(api.post(base + "/configs", "[1]"), 400, "must be a JSON object");
  expect_error(api.post(base + "/configs", "{\"params\": {\"hidden\": \"many\"}}"), 400, "hidden");
  expect_error(api.post(base + "/configs/0/clone", "{\"params\": {\"lr\": \"" + std::string(1 << 20, 'x') + "\"}}"),
               413, "larger than");
  BOOST_TEST(config_count(api, id) == 2u, "no config was added by a bad body");
  BOOST_TEST(api.get_json(base)["paused"] == true);

  // Steering: stop, clone, add; each refused twice where the REPL refuses it.
  auto stopped = api.post(base + "/configs/1/stop");
  BOOST_REQUIRE(stopped);
  BOOST_TEST(stopped->status == 200, stopped->body);
  BOOST_TEST(config_status(api, id, 1) == "stopped");
  expect_error(api.post(base + "/configs/1/stop"), 409, "already ended");
  expect_error(api.post(base + "/configs/42/stop"), 404, "has no config 42");
  auto cloned = api.post(base + "/configs/0/clone", "{\"params\": {\"lr\": 0.0005}}");
  BOOST_REQUIRE(cloned);
  BOOST_TEST(cloned->status == 201, cloned->body);
  BOOST_TEST(json::parse(cloned->body)["cloned_from"] == 0);
  auto added = api.post(base + "/configs", "{\"params\": {\"lr\": 0.003}}");
  BOOST_REQUIRE(added);
  BOOST_TEST(added->status == 201, added->body);
  BOOST_TEST(config_count(api, id) == 4u);

  // The REPL (a client of the same gateway) sees the API's steering, and the
  // API sees the REPL's.
  auto repl = [&](const std::string& script) {
    auto path = tmp.write("script.txt", script);
    return run_cerebro("repl --cluster 127.0.0.1:" + std::to_string(port) + " --token-file " + cluster.token + " < " +
                       path);
  };
  auto seen = repl("show " + id + "/1\ntop " + id + "\n");
  BOOST_TEST(seen.exit_code == 0, seen.text);
  BOOST_TEST(has(seen.text, "stopped"), seen.text);
  BOOST_TEST(has(seen.text, "(paused)"), seen.text);
  auto resumed = repl("resume " + id + "\nstop " + id + "/3\n");
  BOOST_TEST(resumed.exit_code == 0, resumed.text);
  BOOST_TEST(api.get_json(base)["paused"] == false, "the REPL's resume");
  BOOST_TEST(config_status(api, id, 3) == "stopped", "the REPL's stop");
  expect_error(api.post(base + "/resume"), 409, "not paused");

  // /metrics while it runs.
  auto metrics = api.get("/metrics");
  BOOST_REQUIRE(metrics);
  BOOST_TEST(metrics->status == 200);
  BOOST_TEST(has(metrics->get_header_value("Content-Type"), "version=0.0.4"));
  BOOST_TEST(has(metrics->body, "cerebro_agents_up 1\n"), metrics->body);
  BOOST_TEST(has(metrics->body, "cerebro_experiment_running{experiment=\"" + id + "\"} 1\n"), metrics->body);

  // To the end: the experiment and its units as a finished run shows them.
  json done;
  for (int i = 0; i < 1200; ++i) {
    done = api.get_json(base);
    if (done["status"] != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  BOOST_REQUIRE_MESSAGE(done["status"] == "completed", done.dump() + cluster.logs());
  BOOST_TEST(done["best"].is_object());
  BOOST_TEST(done["progress"].get<double>() == 1.0);
  auto units = api.get_json(base + "/units")["units"];
  BOOST_TEST(units.size() == done["units_done"].get<size_t>());
  for (const auto& u : units) {
    BOOST_TEST(u["end_s"].get<double>() >= u["start_s"].get<double>());
    BOOST_TEST(u["worker"] == 0);
  }
  // A poller asks only for the units it has not seen (answered by the reader of ended runs).
  BOOST_REQUIRE(units.size() >= 2u);
  auto tail = api.get_json(base + "/units?since=" + std::to_string(units.size() - 1));
  BOOST_TEST(tail["count"] == units.size());
  BOOST_REQUIRE(tail["units"].size() == 1u);
  BOOST_TEST(tail["units"][0]["seq"] == units.back()["seq"]);
  BOOST_TEST(api.get_json(base + "/units?since=" + std::to_string(units.size()))["units"].empty());
  expect_error(api.get(base + "/units?since=-3"), 400, "since");
  expect_error(api.get(base + "/units?since=all"), 400, "since");
  // The REPL reads the ended run through the same reader.
  auto shown = repl("show " + id + "/0\n");
  BOOST_TEST(shown.exit_code == 0, shown.text);
  BOOST_TEST(has(shown.text, "completed"), shown.text);
  expect_error(api.post(base + "/pause"), 409, "has ended");
  metrics = api.get("/metrics");
  BOOST_TEST(has(metrics->body,
                 "cerebro_units_completed_total{experiment=\"" + id + "\"} " + std::to_string(units.size()) + "\n"),
             metrics->body);

  // Downloads: the models as TorchScript archives (zip files), the run's files as written.
  for (const std::string& path : {base + "/best_model", base + "/configs/0/model"}) {
    auto model = api.get(path);
    BOOST_REQUIRE(model);
    BOOST_TEST(model->status == 200, path);
    BOOST_TEST(model->get_header_value("Content-Type") == "application/octet-stream");
    BOOST_TEST(model->body.rfind("PK", 0) == 0u, path + ": a zip archive");
  }
  auto summary = api.get(base + "/files/summary.json");
  BOOST_REQUIRE(summary);
  BOOST_TEST(json::parse(summary->body)["best"]["id"].is_number_integer(), summary->body);
  auto metrics_csv = api.get(base + "/files/metrics.csv");
  BOOST_REQUIRE(metrics_csv);
  BOOST_TEST(metrics_csv->status == 200);
  BOOST_TEST(has(metrics_csv->get_header_value("Content-Type"), "text/csv"));
  auto report = api.get(base + "/files/report.html");
  BOOST_REQUIRE(report);
  BOOST_TEST(report->status == 200);
  BOOST_TEST(has(report->body, "<html"));
  expect_error(api.get(base + "/files/state"), 404, "the API serves summary.json, metrics.csv and report.html");
  expect_error(api.get(base + "/configs/99/model"), 404, "no config 99");
  BOOST_TEST(api.get_json("/api/v1/version")["api"] == "v1");

  // A run that fails in its setup answers with its status and why, not a server error.
  auto broken = api.post("/api/v1/experiments",
                         "[data]\nsource = \"idx\"\npath = \"/no-such-data-dir\"\n[space]\nmodel = [\"mlp\"]\n",
                         "application/toml");
  BOOST_REQUIRE(broken);
  BOOST_REQUIRE_MESSAGE(broken->status == 201, broken->body);
  const auto broken_id = json::parse(broken->body)["id"].get<std::string>();
  json failed = json::object();
  for (int i = 0; i < 300 && failed.value("status", "") != "failed"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    failed = api.get_json("/api/v1/experiments/" + broken_id);
  }
  BOOST_TEST(failed["status"] == "failed", failed.dump());
  BOOST_TEST(has(failed.value("error", ""), "/no-such-data-dir"), failed.dump());
  BOOST_TEST(failed["configs"].empty());
  BOOST_TEST(!has(failed.dump(), "/state"), failed.dump());
}

// A submission brings its files in one multipart request: the spec's relative paths find them, the run
// trains on them, and the coordinator keeps them with its state. A bad name, an oversized upload or a form
// without its spec keeps nothing.
BOOST_AUTO_TEST_CASE(a_submission_brings_its_files_in_one_request) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port, {"--http", "127.0.0.1:0", "--upload-max-mb", "1"});
  Api api(http_port(coordinator));
  cluster.start_agent("node1", port);
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("agent node1 joined", 60), cluster.logs());
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 200; ++i)
    csv += std::to_string(i % 7) + "," + std::to_string(i % 5) + "," + (i % 7 > 3 ? "big" : "small") + "\n";
  const std::string spec =
      "[experiment]\nname = \"brought\"\nepochs = 1\n[data]\nsource = \"csv\"\ntrain = \"tables/rows.csv\"\n"
      "label_column = \"label\"\nvalidation_fraction = 0.2\ntest_fraction = 0.2\n[space]\nmodel = [\"mlp\"]\n";
  auto uploads = [&] {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator(tmp.file("state/uploads"), ec); !ec && it != fs::directory_iterator(); ++it)
      ++n;
    return n;
  };
  auto sent = api.http.Post(
      "/api/v1/experiments", api.auth(),
      httplib::MultipartFormDataItems{{"spec", spec, "", ""}, {"file", csv, "tables/rows.csv", "text/csv"}});
  BOOST_REQUIRE(sent);
  BOOST_REQUIRE_MESSAGE(sent->status == 201, sent->body);
  const auto id = json::parse(sent->body)["id"].get<std::string>();
  json done = json::object();
  for (int i = 0; i < 600 && done.value("status", "") != "completed" && done.value("status", "") != "failed"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    done = api.get_json("/api/v1/experiments/" + id);
  }
  BOOST_TEST(done["status"] == "completed", done.dump() + cluster.logs());
  BOOST_TEST(uploads() == 1u);

  // Refused, and nothing kept: a name that leaves its folder, a spec part missing, an upload over the cap.
  auto escape =
      api.http.Post("/api/v1/experiments", api.auth(),
                    httplib::MultipartFormDataItems{{"spec", spec, "", ""}, {"file", csv, "../rows.csv", ""}});
  expect_error(escape, 400, "each part of the path must be a name");
  auto specless =
      api.http.Post("/api/v1/experiments", api.auth(), httplib::MultipartFormDataItems{{"file", csv, "rows.csv", ""}});
  expect_error(specless, 400, "has no part \"spec\"");
  auto huge = api.http.Post("/api/v1/experiments", api.auth(),
                            httplib::MultipartFormDataItems{
                                {"spec", spec, "", ""}, {"file", std::string((1 << 20) + 4096, 'x'), "big.bin", ""}});
  BOOST_REQUIRE(huge);
  BOOST_TEST(huge->status == 413, huge->body);
  BOOST_TEST(has(huge->body, "larger than 1048576 bytes (its spec and files)"), huge->body);
  BOOST_TEST(uploads() == 1u, "a refused submission keeps no file");
  // Without a token nothing is read.
  auto anonymous = api.http.Post(
      "/api/v1/experiments", httplib::MultipartFormDataItems{{"spec", spec, "", ""}, {"file", csv, "rows.csv", ""}});
  expect_error(anonymous, 401, "needs the cluster token");
  BOOST_TEST(uploads() == 1u);
}

BOOST_AUTO_TEST_CASE(the_login_page_sets_a_session_that_needs_the_dashboard_header_to_steer) {
  TempDir tmp;
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator = cluster.start_coordinator(port, {"--http", "127.0.0.1:0"});
  Api api(http_port(coordinator));
  auto form = api.http.Get("/login");
  BOOST_REQUIRE(form);
  BOOST_TEST(form->status == 200);
  BOOST_TEST(has(form->body, "name=\"token\""));
  auto wrong = api.http.Post("/login", "token=wrong", "application/x-www-form-urlencoded");
  BOOST_REQUIRE(wrong);
  BOOST_TEST(wrong->status == 401);
  BOOST_TEST(wrong->get_header_value("Set-Cookie").empty());
  auto right = api.http.Post("/login", "token=" + kToken, "application/x-www-form-urlencoded");
  BOOST_REQUIRE(right);
  BOOST_TEST(right->status == 303);
  auto cookie = right->get_header_value("Set-Cookie");
  BOOST_TEST(has(cookie, "HttpOnly"));
  auto session = cookie.substr(0, cookie.find(';'));
  auto listed = api.http.Get("/api/v1/experiments", {{"Cookie", session}});
  BOOST_REQUIRE(listed);
  BOOST_TEST(listed->status == 200);
  auto dashboard = api.http.Get("/", {{"Cookie", session}});
  BOOST_REQUIRE(dashboard);
  BOOST_TEST(dashboard->status == 200);
  BOOST_TEST(has(dashboard->body, "<canvas id=\"schedule\">"));
  auto chart = api.http.Get("/chart.min.js", {{"Cookie", session}});
  BOOST_REQUIRE(chart);
  BOOST_TEST(chart->body.size() > 100000u, "Chart.js is served from the binary");
  // A cookie alone (a page on another site could send it) cannot steer.
  expect_error(api.http.Post("/api/v1/experiments", {{"Cookie", session}}, "x", "text/plain"), 403,
               "X-Cerebro-Request");
  auto query_login = api.http.Get(("/?token=" + kToken).c_str());
  BOOST_REQUIRE(query_login);
  BOOST_TEST(query_login->status == 303, "the token in the URL logs in and leaves the address");
  BOOST_TEST(has(query_login->get_header_value("Set-Cookie"), "cerebro_session="));

  // Guessing is throttled: after five wrong tokens from this address even the
  // right one waits (429, Retry-After), at the form and in the address.
  for (int i = 0; i < 5; ++i) {
    auto guess = api.http.Post("/login", "token=guess-" + std::to_string(i), "application/x-www-form-urlencoded");
    BOOST_REQUIRE(guess);
    BOOST_TEST(guess->status == 401);
  }
  auto locked = api.http.Post("/login", "token=" + kToken, "application/x-www-form-urlencoded");
  BOOST_REQUIRE(locked);
  BOOST_TEST(locked->status == 429);
  BOOST_TEST(locked->get_header_value("Set-Cookie").empty());
  auto wait_s =
      std::stoi(locked->get_header_value("Retry-After", 0).empty() ? "0" : locked->get_header_value("Retry-After"));
  BOOST_TEST((wait_s > 0 && wait_s <= 60), wait_s);
  BOOST_TEST(has(locked->body, "Too many wrong tokens"));
  auto locked_link = api.http.Get(("/?token=" + kToken).c_str());
  BOOST_REQUIRE(locked_link);
  BOOST_TEST(locked_link->status == 429);
  // Programs with the token are not throttled.
  BOOST_TEST(api.get_json("/api/v1/agents").contains("agents"));
}

BOOST_AUTO_TEST_CASE(https_with_the_coordinators_certificate) {
  TempDir tmp;
  auto run = [&](const std::string& cmd) { return run_command("cd " + tmp.file("") + " && " + cmd).exit_code; };
  BOOST_REQUIRE(run("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
                    "-subj /CN=cerebro-test-ca") == 0);
  BOOST_REQUIRE(run("openssl req -newkey rsa:2048 -nodes -keyout node.key -out node.csr -subj /CN=localhost") == 0);
  BOOST_REQUIRE(run("openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out node.pem -days 2") ==
                0);
  Cluster cluster(tmp);
  int port = free_port();
  auto& coordinator =
      cluster.start_coordinator(port, {"--http", "127.0.0.1:0", "--tls-cert", tmp.file("node.pem"), "--tls-key",
                                       tmp.file("node.key"), "--tls-ca", tmp.file("ca.pem")});
  BOOST_REQUIRE_MESSAGE(coordinator.wait_for_log("http on https://", 20), coordinator.log());
  int http = http_port(coordinator);
  httplib::SSLClient secure("127.0.0.1", http);
  // The test's certificate names localhost, the request 127.0.0.1: which
  // certificate is served is checked with openssl below.
  secure.enable_server_certificate_verification(false);
  auto r = secure.Get("/api/v1/agents", {{"Authorization", "Bearer " + kToken}});
  BOOST_REQUIRE_MESSAGE(r, "the HTTPS request failed: " + httplib::to_string(r.error()));
  BOOST_TEST(r->status == 200);
  auto denied = secure.Get("/api/v1/agents");
  BOOST_REQUIRE(denied);
  BOOST_TEST(denied->status == 401);
  auto served = run_command("openssl s_client -connect 127.0.0.1:" + std::to_string(http) + " </dev/null");
  BOOST_TEST(has(served.text, "CN = localhost"), served.text);
  BOOST_TEST(has(served.text, "issuer=CN = cerebro-test-ca"), served.text);
  httplib::Client plain("127.0.0.1", http);
  plain.set_read_timeout(3, 0);
  auto refused = plain.Get("/api/v1/agents", {{"Authorization", "Bearer " + kToken}});
  BOOST_TEST((!refused || refused->status >= 400), "plain HTTP gets nothing from an HTTPS server");
}

BOOST_AUTO_TEST_CASE(run_with_ui_prints_a_local_url_with_a_token_and_writes_the_run_files) {
  TempDir tmp;
  auto spec = tmp.write("tiny.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nlr = [0.001]\n", 1, 2000, 1));
  auto out = run_cerebro("run " + spec + " --ui 0 --out " + tmp.file("run"));
  BOOST_TEST(out.exit_code == 0, out.text);
  BOOST_TEST(std::regex_search(out.text, std::regex("dashboard: http://127\\.0\\.0\\.1:[0-9]+/\\?token=[0-9a-f]{48}")),
             out.text);
  // The link's token works once; the API token is printed beside it, and is another.
  std::smatch link, api_token;
  BOOST_REQUIRE(std::regex_search(out.text, link, std::regex("\\?token=([0-9a-f]{48})")));
  BOOST_REQUIRE_MESSAGE(std::regex_search(out.text, api_token, std::regex("api token: ([0-9a-f]{48}) ")), out.text);
  BOOST_TEST(link[1].str() != api_token[1].str());
  BOOST_TEST(has(out.text, "logs one browser in once"), out.text);
  BOOST_TEST(fs::exists(tmp.file("run/summary.json")));
  BOOST_TEST(fs::exists(tmp.file("run/metrics.csv")));
  // The directory it printed is the one show and report take (its store is under experiments/<id>/).
  BOOST_TEST(has(out.text, "run files in " + tmp.file("run")), out.text);
  auto shown = run_cerebro("show " + tmp.file("run"));
  BOOST_TEST(shown.exit_code == 0, shown.text);
  BOOST_TEST(has(shown.text, "lr"), shown.text);
  auto reported = run_cerebro("report " + tmp.file("run") + " --out " + tmp.file("report.html"));
  BOOST_TEST(reported.exit_code == 0, reported.text);
  BOOST_TEST(fs::exists(tmp.file("report.html")));
  auto nothing = run_cerebro("show " + tmp.path().string());
  BOOST_TEST(nothing.exit_code == 1);
  BOOST_TEST(has(nothing.text, "not a run directory (it has neither a state/ store nor experiments/<id>/state)"),
             nothing.text);
  auto both = run_cerebro("run " + spec + " --ui 0 --cluster 127.0.0.1:1 --token-file x");
  BOOST_TEST(both.exit_code == 1);
  BOOST_TEST(has(both.text, "--ui serves a new embedded run"), both.text);
}

// --keep-serving: after the run, the dashboard and API still answer about it (its files too) until the
// process is stopped; without --ui it is refused.
BOOST_AUTO_TEST_CASE(run_with_ui_keeps_serving_the_finished_run_until_stopped) {
  TempDir tmp;
  auto spec = tmp.write("tiny.toml", small_spec("model = [\"mlp\"]\nhidden = [[16]]\nlr = [0.001]\n", 1, 2000, 1));
  ChildProcess run({cerebro_binary(), "run", spec, "--ui", "0", "--keep-serving", "--out", tmp.file("run")},
                   tmp.file("run.log"));
  BOOST_REQUIRE_MESSAGE(run.wait_for_log("until Ctrl-C", 120), run.log());
  std::smatch m;
  const auto log = run.log();
  BOOST_REQUIRE(std::regex_search(log, m, std::regex("still served at http://127\\.0\\.0\\.1:([0-9]+)/ until")));
  std::smatch token;
  BOOST_REQUIRE(std::regex_search(log, token, std::regex("api token: ([0-9a-f]{48}) ")));
  httplib::Client http("127.0.0.1", std::stoi(m[1]));
  const httplib::Headers auth{{"Authorization", "Bearer " + token[1].str()}};
  auto list = http.Get("/api/v1/experiments", auth);
  BOOST_REQUIRE(list);
  auto experiments = json::parse(list->body)["experiments"];
  BOOST_REQUIRE_EQUAL(experiments.size(), 1u);
  BOOST_TEST(experiments[0]["status"] == "completed");
  auto summary =
      http.Get("/api/v1/experiments/" + experiments[0]["id"].get<std::string>() + "/files/summary.json", auth);
  BOOST_REQUIRE(summary);
  BOOST_TEST(summary->status == 200, summary->body);
  run.send_signal(SIGINT);
  BOOST_TEST(run.wait_exit(20) != -1, "Ctrl-C ends it");

  auto alone = run_cerebro("run " + spec + " --keep-serving --out " + tmp.file("other"));
  BOOST_TEST(alone.exit_code == 1);
  BOOST_TEST(has(alone.text, "--keep-serving keeps --ui's dashboard"), alone.text);
}
