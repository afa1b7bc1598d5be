// The HTTP API's plain parts (runtime/api): the route table, request bodies,
// tokens and sessions, the experiment and unit views from a real state store,
// and the Prometheus exposition.
#define BOOST_TEST_MODULE api_core
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "runtime/api/api_auth.hpp"
#include "runtime/api/api_request.hpp"
#include "runtime/api/api_route.hpp"
#include "runtime/api/ended_answers.hpp"
#include "runtime/api/experiment_view.hpp"
#include "runtime/api/prometheus.hpp"
#include "runtime/api/upload.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/spec/objective_format.hpp"
#include "runtime/spec/steering.hpp"
#include "runtime/store/state_store.hpp"
#include "test/support/temp_dir.hpp"

using namespace cerebro;
using namespace cerebro::api;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(every_route_matches_its_method_and_path) {
  struct Case {
    std::string method, path;
    Endpoint endpoint;
    std::string experiment;
    ConfigId config;
  };
  std::vector<Case> cases = {
      {"GET", "/api/v1/experiments", Endpoint::list_experiments, "", -1},
      {"POST", "/api/v1/experiments", Endpoint::submit_experiment, "", -1},
      {"GET", "/api/v1/experiments/small-20261201-1", Endpoint::get_experiment, "small-20261201-1", -1},
      {"GET", "/api/v1/experiments/e-1/status", Endpoint::get_status, "e-1", -1},
      {"GET", "/api/v1/experiments/e-1/units", Endpoint::get_units, "e-1", -1},
      {"GET", "/api/v1/experiments/e-1/configs/3", Endpoint::get_config, "e-1", 3},
      {"POST", "/api/v1/experiments/e-1/pause", Endpoint::pause, "e-1", -1},
      {"POST", "/api/v1/experiments/e-1/resume", Endpoint::resume, "e-1", -1},
      {"POST", "/api/v1/experiments/e-1/configs/2/stop", Endpoint::stop_config, "e-1", 2},
      {"POST", "/api/v1/experiments/e-1/configs/0/clone", Endpoint::clone_config, "e-1", 0},
      {"POST", "/api/v1/experiments/e-1/configs", Endpoint::add_config, "e-1", -1},
      {"GET", "/api/v1/agents", Endpoint::list_agents, "", -1},
      {"GET", "/api/v1/cluster", Endpoint::cluster, "", -1},
      {"GET", "/api/v1/version", Endpoint::version, "", -1},
      {"GET", "/api/v1/experiments/e-1/configs/2/model", Endpoint::config_model, "e-1", 2},
      {"GET", "/api/v1/experiments/e-1/best_model", Endpoint::best_model, "e-1", -1},
      {"GET", "/api/v1/experiments/e-1/files/metrics.csv", Endpoint::run_file, "e-1", -1},
      {"GET", "/api/v1/datasets", Endpoint::list_datasets, "", -1},
      {"POST", "/api/v1/datasets", Endpoint::add_dataset, "", -1},
      {"DELETE", "/api/v1/datasets/fashion-2k", Endpoint::remove_dataset, "", -1},
  };
  BOOST_TEST(cases.size() == routes().size(), "a case per route");
  BOOST_TEST(match_route("DELETE", "/api/v1/datasets/fashion-2k").route.value_or(Route{}).name == "fashion-2k");
  BOOST_TEST(match_route("GET", "/api/v1/datasets/fashion-2k").http_status == 405);
  for (const auto& c : cases) {
    auto m = match_route(c.method, c.path);
    BOOST_TEST_INFO(c.method << " " << c.path << ": " << m.error);
    BOOST_REQUIRE(m.route.has_value());
    BOOST_TEST((m.route->endpoint == c.endpoint));
    BOOST_TEST(m.route->experiment == c.experiment);
    BOOST_TEST(m.route->config == c.config);
    BOOST_TEST(to_string(route_info(c.endpoint).method) == c.method);
  }
}

// An ended experiment's answer is kept as sent; past the capacity, the one kept longest ago goes, and
// keeping one again makes it the newest.
BOOST_AUTO_TEST_CASE(ended_answers_are_kept_up_to_their_capacity) {
  EndedAnswers ended(2);
  BOOST_TEST(!ended.find("a").has_value());
  ended.keep("a", "{\"id\":\"a\"}");
  ended.keep("b", "{\"id\":\"b\"}");
  BOOST_TEST(ended.find("a").value() == "{\"id\":\"a\"}");
  ended.keep("a", "{\"id\":\"a2\"}");
  ended.keep("c", "{\"id\":\"c\"}");
  BOOST_TEST(!ended.find("b").has_value());
  BOOST_TEST(ended.find("a").value() == "{\"id\":\"a2\"}");
  BOOST_TEST(ended.find("c").has_value());
}

BOOST_AUTO_TEST_CASE(methods_and_site_pages_are_read_once_into_values) {
  BOOST_TEST((parse_http_method("GET") == HttpMethod::get));
  BOOST_TEST((parse_http_method("POST") == HttpMethod::post));
  BOOST_TEST((parse_http_method("get") == HttpMethod::other), "HTTP methods are case-sensitive");
  BOOST_TEST((parse_http_method("DELETE") == HttpMethod::delete_));
  BOOST_TEST((parse_http_method("PUT") == HttpMethod::other));
  BOOST_TEST((site_page("/") == SitePage::dashboard));
  BOOST_TEST((site_page("/index.html") == SitePage::dashboard));
  BOOST_TEST((site_page("/login") == SitePage::login));
  BOOST_TEST((site_page("/metrics") == SitePage::metrics));
  BOOST_TEST((site_page("/login/") == SitePage::other));
  BOOST_TEST((site_page("/app.js") == SitePage::other));
}

BOOST_AUTO_TEST_CASE(unknown_paths_wrong_methods_and_bad_ids_are_refused_with_their_status) {
  auto m = match_route("GET", "/api/v1/nothing");
  BOOST_TEST(!m.route.has_value());
  BOOST_TEST(m.http_status == 404);
  BOOST_TEST(has(m.error, "no such endpoint: GET /api/v1/nothing"));
  m = match_route("DELETE", "/api/v1/experiments/e-1");
  BOOST_TEST(m.http_status == 405);
  BOOST_TEST(has(m.error, "DELETE is not allowed"));
  m = match_route("GET", "/api/v1/experiments/e-1/pause");
  BOOST_TEST(m.http_status == 405, "pause is a POST");
  m = match_route("POST", "/api/v1/experiments/e-1/configs/three/stop");
  BOOST_TEST(m.http_status == 400);
  BOOST_TEST(has(m.error, "\"three\" is not a config id"));
  m = match_route("POST", "/api/v1/experiments/e-1/configs/-1/stop");
  BOOST_TEST(m.http_status == 400);
  m = match_route("GET", "/api/v1/experiments/bad%20id");
  BOOST_TEST(m.http_status == 404, "an id with characters no experiment has names none");

  // A run file by one of its names only: never another file of the server's.
  BOOST_TEST((match_route("GET", "/api/v1/experiments/e-1/files/report.html").route->file == RunFile::report));
  BOOST_TEST((match_route("GET", "/api/v1/experiments/e-1/best_model").route->file == RunFile::best_model));
  for (const char* path : {"/api/v1/experiments/e-1/files/state", "/api/v1/experiments/e-1/files/..",
                           "/api/v1/experiments/e-1/files/best_model.pt", "/api/v1/experiments/e-1/files/spec.toml"}) {
    m = match_route("GET", path);
    BOOST_TEST(!m.route.has_value(), path);
    BOOST_TEST(m.http_status == 404, path);
    BOOST_TEST(has(m.error, "the API serves summary.json, metrics.csv and report.html"), m.error);
  }
}

BOOST_AUTO_TEST_CASE(params_bodies_become_the_repls_settings) {
  auto s = settings_from_body(R"({"params": {"lr": 0.003, "hidden": [64, 32], "optimizer": "sgd"}})", true);
  BOOST_REQUIRE(s.ok());
  nlohmann::json base = {{"lr", 0.001}, {"hidden", {128}}, {"optimizer", "adam"}, {"model", "mlp"}};
  auto applied = apply_settings(base, *s);
  BOOST_REQUIRE(applied.ok());
  BOOST_TEST((*applied)["lr"].get<double>() == 0.003);
  BOOST_TEST(((*applied)["hidden"] == nlohmann::json({64, 32})));
  BOOST_TEST((*applied)["optimizer"] == "sgd");
  BOOST_TEST((*applied)["model"] == "mlp");
  // A string that looks like a number stays a string.
  auto text = settings_from_body(R"({"params": {"tag": "123"}})", true);
  BOOST_REQUIRE(text.ok());
  BOOST_TEST(apply_settings(nlohmann::json::object(), *text).value()["tag"].is_string());
  // add: an empty body is no change.
  BOOST_TEST(settings_from_body("", false).value().empty());
  BOOST_TEST(settings_from_body("{}", false).value().empty());
}

// The spec parser's message, one problem per line, becomes fields: the key, the line and the column.
BOOST_AUTO_TEST_CASE(a_spec_parsers_message_becomes_one_structured_problem_per_line) {
  const auto problems = spec_problems(
      "the request body:2:8: [experiment] name must be a string, got integer 3\n"
      "the request body:7:1: unknown key 'lrr' in [experiment] (known: 'name', 'epochs')\n"
      "the request body: [data] annotations is required: the COCO file\n"
      "something else entirely",
      "the request body");
  BOOST_REQUIRE_EQUAL(problems.size(), 4u);
  BOOST_TEST(problems[0] == (nlohmann::json{{"message", "[experiment] name must be a string, got integer 3"},
                                            {"key", "[experiment] name"},
                                            {"line", 2},
                                            {"column", 8}}));
  BOOST_TEST(problems[1]["key"] == "[experiment] lrr");
  BOOST_TEST(problems[1]["line"] == 7);
  BOOST_TEST(problems[2]["message"] == "[data] annotations is required: the COCO file");
  BOOST_TEST(problems[2]["line"].is_null());  // a missing key has no position
  BOOST_TEST(problems[2]["key"] == "[data] annotations");
  BOOST_TEST(problems[3] ==
             (nlohmann::json{
                 {"message", "something else entirely"}, {"key", nullptr}, {"line", nullptr}, {"column", nullptr}}));
}

// A submission's form, part by part: the spec kept as text, each file written where its name says, the
// caps and the names checked; a refused form leaves no directory.
BOOST_AUTO_TEST_CASE(a_submission_form_keeps_its_spec_and_writes_its_files) {
  cerebro::testing::TempDir tmp;
  auto upload = Upload::create(tmp.file("uploads"), 64);
  BOOST_REQUIRE(upload.ok());
  auto& form = **upload;
  BOOST_TEST(form.begin_part("spec", "s.toml").ok());
  BOOST_TEST(form.receive("[data]\n", 7).ok());
  BOOST_TEST(form.begin_part("file", "tables/rows.csv").ok());
  BOOST_TEST(form.receive("a,b\n", 4).ok());
  auto spec = form.finish_form();
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(*spec == "[data]\n");
  BOOST_TEST(form.names() == std::vector<std::string>{"tables/rows.csv"});
  std::ifstream written(form.dir() + "/tables/rows.csv");
  std::string line;
  std::getline(written, line);
  BOOST_TEST(line == "a,b");
  BOOST_TEST(form.bytes() == 11u);

  auto refused = Upload::create(tmp.file("uploads"), 64);
  BOOST_REQUIRE(refused.ok());
  auto& bad = **refused;
  BOOST_TEST(has(bad.begin_part("other", "").message(), "got \"other\""));
  BOOST_TEST(has(bad.begin_part("file", "../up.csv").message(), "each part of the path must be a name"));
  BOOST_TEST(has(bad.begin_part("file", "/etc/x").message(), "must be a relative path"));
  BOOST_TEST(has(bad.begin_part("file", "a b").message(), "' ' is not allowed"));
  BOOST_TEST(bad.begin_part("file", "big.bin").ok());
  BOOST_TEST(!bad.receive(std::string(65, 'x').data(), 65).ok());
  BOOST_TEST(bad.over_cap());
  BOOST_TEST(has(bad.finish_form().error(), "no part \"spec\""));
  const auto dir = bad.dir();
  bad.discard();
  BOOST_TEST(!std::filesystem::exists(dir));
}

BOOST_AUTO_TEST_CASE(bad_bodies_are_refused_naming_what_is_wrong) {
  auto refused = [](const std::string& body, bool require_one, const std::string& part) {
    auto s = settings_from_body(body, require_one);
    BOOST_TEST_INFO(body);
    BOOST_TEST(!s.ok());
    BOOST_TEST((s.code() == StatusCode::invalid_argument));
    BOOST_TEST(has(s.error(), part), s.error());
  };
  refused("{not json", false, "not valid JSON");
  refused("[1, 2]", false, "must be a JSON object");
  refused(R"({"param": {}})", false, "unknown key \"param\"");
  refused(R"({"params": 3})", false, "\"params\" must be an object");
  refused(R"({"params": {}})", true, "give at least one parameter");
  refused("", true, "at least one parameter");
  refused(R"({"params": {"lr": null}})", false, "params.lr: a value must be");
  refused(R"({"params": {"lr": {"a": 1}}})", false, "params.lr: a value must be");
  refused(R"({"params": {"bad key!": 1}})", false, "not a parameter name");
  nlohmann::json many = {{"params", nlohmann::json::object()}};
  for (int i = 0; i < 65; ++i) many["params"]["p" + std::to_string(i)] = i;
  refused(many.dump(), false, "at most 64");
  refused(std::string(kMaxBodyBytes + 1, ' '), false, "at most");
  BOOST_TEST(!check_spec_body("  \n").ok());
  BOOST_TEST(!check_spec_body(std::string(kMaxBodyBytes + 1, 'x')).ok());
  BOOST_TEST(check_spec_body("[experiment]\nname = \"x\"\n").ok());
  auto error = nlohmann::json::parse(error_json(404, "no experiment x"));
  BOOST_TEST(error["error"] == "no experiment x");
  BOOST_TEST(error["status"] == 404);
}

BOOST_AUTO_TEST_CASE(tokens_headers_cookies_and_sessions) {
  BOOST_TEST(same_token("abc", "abc"));
  BOOST_TEST(!same_token("abd", "abc"));
  BOOST_TEST(!same_token("abcd", "abc"));
  BOOST_TEST(!same_token("", ""), "an empty token never matches");
  BOOST_TEST(bearer_token("Bearer s3cret").value() == "s3cret");
  BOOST_TEST(!bearer_token("Basic s3cret").has_value());
  BOOST_TEST(!bearer_token("Bearer ").has_value());
  BOOST_TEST(cookie_value("a=1; cerebro_session=xyz; b=2", kSessionCookie).value() == "xyz");
  BOOST_TEST(!cookie_value("a=1; b=2", kSessionCookie).has_value());
  auto t1 = random_token(), t2 = random_token();
  BOOST_TEST(t1.size() == 48u);
  BOOST_TEST(t1 != t2);
  BOOST_TEST(has(session_cookie("xyz", true), "HttpOnly"));
  BOOST_TEST(has(session_cookie("xyz", true), "SameSite=Strict"));
  BOOST_TEST(has(session_cookie("xyz", true), "Secure"));
  BOOST_TEST(!has(session_cookie("xyz", false), "Secure"));

  SessionTable sessions;
  auto s = sessions.open();
  BOOST_TEST(sessions.valid(s));
  BOOST_TEST(!sessions.valid(s + "0"));
  BOOST_TEST((authenticate("Bearer tok", "", "tok", sessions) == Credential::bearer));
  BOOST_TEST((authenticate("Bearer wrong", "", "tok", sessions) == Credential::none));
  BOOST_TEST((authenticate("", "", "tok", sessions) == Credential::none));
  BOOST_TEST((authenticate("", std::string(kSessionCookie) + "=" + s, "tok", sessions) == Credential::session));
  BOOST_TEST((authenticate("", std::string(kSessionCookie) + "=forged", "tok", sessions) == Credential::none));
  for (size_t i = 0; i < kMaxSessions; ++i) sessions.open();
  BOOST_TEST(sessions.size() == kMaxSessions);
  BOOST_TEST(!sessions.valid(s), "the oldest session goes first");
}

namespace {

UnitLogEntry unit(ConfigId config, PartitionId partition, int32_t epoch, WorkerId worker, double start, double end,
                  bool validates, double accuracy) {
  UnitLogEntry e;
  e.config = config;
  e.partition = partition;
  e.epoch = epoch;
  e.worker = worker;
  e.start_s = start;
  e.end_s = end;
  e.train_s = (end - start) * 0.9;
  e.train_loss = 1.0 - accuracy / 2;
  e.examples = 100;
  e.has_validation = validates;
  e.val_accuracy = accuracy;
  e.val_loss = 1.0 - accuracy;
  return e;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_experiment_and_units_views_come_from_the_store) {
  cerebro::testing::TempDir tmp;
  auto store = StateStore::open(tmp.file("state"), true).value();
  store->put_meta("metric", "val_accuracy");
  store->put_meta("spec", "[experiment]\nname = \"v\"\n");
  store->put_config({0, {{"lr", 0.001}}, ConfigStatus::running, ""});
  store->put_config({1, {{"lr", 0.01}}, ConfigStatus::stopped, ""});
  store->put_config({2, {{"lr", 0.1}}, ConfigStatus::running, ""});
  store->commit_unit(unit(0, 0, 0, 0, 0.0, 1.0, false, 0), "s").value();
  store->commit_unit(unit(0, 1, 0, 1, 1.0, 2.0, true, 0.70), "s").value();
  store->commit_unit(unit(1, 1, 0, 0, 1.0, 2.5, false, 0), "s").value();
  store->commit_unit(unit(1, 0, 0, 1, 2.5, 3.0, true, 0.80), "s").value();
  store->commit_unit(unit(0, 0, 1, 0, 3.0, 4.0, false, 0), "s").value();  // epoch 1 in progress

  auto view = experiment_view(ExperimentFacts{*store, true});
  BOOST_TEST(view["metric"] == "val_accuracy");
  BOOST_TEST(view["paused"] == true);
  BOOST_TEST(has(view["spec"].get<std::string>(), "name = \"v\""));
  BOOST_TEST(view["units_done"] == 5);
  BOOST_REQUIRE(view["configs"].size() == 3u);
  const auto& first = view["configs"][0];
  BOOST_TEST(first["config"] == 1, "ranked by the metric, best first");
  BOOST_TEST(first["rank"] == 1);
  BOOST_TEST(first["status"] == "stopped");
  BOOST_TEST(first["metric"].get<double>() == 0.80);
  BOOST_TEST(view["configs"][1]["config"] == 0);
  BOOST_TEST(view["configs"][1]["epochs"].size() == 1u, "the epoch in progress is not listed");
  BOOST_TEST(view["configs"][1]["epochs"][0]["val_accuracy"].get<double>() == 0.70);
  BOOST_TEST(view["configs"][2]["config"] == 2);
  BOOST_TEST(view["configs"][2]["metric"].is_null());
  BOOST_TEST(view["configs"][2]["rank"].is_null());
  BOOST_TEST(view["best"]["config"] == 1);
  BOOST_TEST(view["best"]["params"]["lr"].get<double>() == 0.01);
  // Each section adds its keys: a new section is a new row.
  BOOST_TEST(experiment_view_sections().size() >= 2u);

  auto units = units_view(store->unit_log())["units"];
  BOOST_REQUIRE(units.size() == 5u);
  BOOST_TEST(units[1]["config"] == 0);
  BOOST_TEST(units[1]["partition"] == 1);
  BOOST_TEST(units[1]["worker"] == 1);
  BOOST_TEST(units[1]["start_s"].get<double>() == 1.0);
  BOOST_TEST(units[1]["end_s"].get<double>() == 2.0);
  // No result time recorded: the worker's time ends at the commit, as in old logs.
  BOOST_TEST(units[1]["result_s"].get<double>() < 0);
  BOOST_TEST(units[1]["worker_end_s"].get<double>() == 2.0);
  BOOST_TEST(units[1]["validated"] == true);
  BOOST_TEST(units[1]["seq"].get<int64_t>() > units[0]["seq"].get<int64_t>());
}

// A finished captioning or detection run's pictures (the run finisher stores them) are in the view for
// the dashboard; other runs have none.
BOOST_AUTO_TEST_CASE(a_runs_example_pictures_are_in_the_experiment_view) {
  cerebro::testing::TempDir tmp;
  auto store = StateStore::open(tmp.file("state"), true).value();
  store->put_meta("metric", "val_bleu4");
  auto view = experiment_view({*store, false});
  BOOST_TEST(view["examples"] == nlohmann::json::array());
  store->put_meta("examples", R"([{"image": "data:image/png;base64,iVBO", "width": 16, "height": 16,
                                   "caption": "a red square", "references": ["a red square"]}])");
  view = experiment_view({*store, false});
  BOOST_REQUIRE_EQUAL(view["examples"].size(), 1u);
  BOOST_TEST(view["examples"][0]["caption"] == "a red square");
  store->put_meta("examples", "not json");  // a damaged entry is no pictures, not a broken view
  BOOST_TEST(experiment_view({*store, false})["examples"] == nlohmann::json::array());
}

// Configs appear as soon as they are proposed (created), and an
// experiment with several objectives shows its Pareto front, live from the
// store while it runs (inference_ms only at the end), final once it ends.
BOOST_AUTO_TEST_CASE(proposed_configs_and_the_pareto_front_are_in_the_experiment_view) {
  cerebro::testing::TempDir tmp;
  auto store = StateStore::open(tmp.file("state"), true).value();
  store->put_meta("metric", "val_accuracy");
  store->put_meta("objectives", R"([{"name": "val_accuracy", "direction": "maximize"},
                                    {"name": "parameters", "direction": "minimize"},
                                    {"name": "inference_ms", "direction": "minimize"}])");
  // (accuracy, parameters): 1 dominates 2; 4 would dominate all but failed.
  const std::vector<std::pair<double, int>> values{{0.70, 100}, {0.80, 300}, {0.75, 400}, {0, 0}, {0.90, 50}};
  for (ConfigId c = 0; c < 5; ++c) {
    store->put_config({c, {{"lr", 0.001 * (c + 1)}}, c == 4 ? ConfigStatus::failed : ConfigStatus::running, ""});
    store->put_meta("parameters/" + std::to_string(c), std::to_string(values[c].second));
    if (c == 3) continue;  // just proposed: no unit yet
    store->commit_unit(unit(c, 0, 0, 0, 0.0, 1.0, true, values[c].first), "s").value();
  }
  auto view = experiment_view(ExperimentFacts{*store, false});
  BOOST_REQUIRE(view["configs"].size() == 5u);
  bool proposed_listed = false;
  for (const auto& c : view["configs"])
    if (c["config"] == 3) proposed_listed = c["status"] == "running" && c["epochs"].empty() && c["metric"].is_null();
  BOOST_TEST(proposed_listed, "a proposed config is listed before it trains");
  BOOST_TEST(view["pareto_final"] == false);
  BOOST_REQUIRE(view["pareto_objectives"].size() == 3u);
  BOOST_TEST(view["pareto_objectives"][2]["name"] == "inference_ms");
  BOOST_TEST(view["pareto_objectives"][2]["live"] == false, "measured when the run ends");
  BOOST_TEST(view["pareto_objectives"][1]["direction"] == "minimize");
  BOOST_REQUIRE(view["pareto"].size() == 2u);
  BOOST_TEST(view["pareto"][0]["config"] == 1, "best first by the first objective");
  BOOST_TEST(view["pareto"][0]["values"]["val_accuracy"].get<double>() == 0.80);
  BOOST_TEST(view["pareto"][0]["values"]["parameters"].get<double>() == 300);
  BOOST_TEST(!view["pareto"][0]["values"].contains("inference_ms"));
  BOOST_TEST(view["pareto"][1]["config"] == 0);
  // How each column is printed (one rule for every table): 4 significant digits, parameters as integers.
  BOOST_TEST(view["pareto_objectives"][0]["decimals"] == 4);
  BOOST_TEST(view["pareto_objectives"][1]["decimals"] == 0);
  BOOST_TEST(!view["pareto_objectives"][2].contains("decimals"), "not measured yet, not printed");

  // The run's end: every objective measured; config 2's fast inference puts it on the front.
  store->put_meta("objective_values", R"([
      {"config": 1, "values": {"val_accuracy": 0.80, "parameters": 300, "inference_ms": 2.0}},
      {"config": 2, "values": {"val_accuracy": 0.75, "parameters": 400, "inference_ms": 0.5}},
      {"config": 0, "values": {"val_accuracy": 0.70, "parameters": 100, "inference_ms": 1.0}}])");
  view = experiment_view(ExperimentFacts{*store, false});
  BOOST_TEST(view["pareto_final"] == true);
  BOOST_TEST(view["pareto_objectives"][2]["live"] == true);
  BOOST_REQUIRE(view["pareto"].size() == 3u);
  BOOST_TEST(view["pareto"][1]["config"] == 2);
  BOOST_TEST(view["pareto"][1]["values"]["inference_ms"].get<double>() == 0.5);
  BOOST_TEST(view["pareto_objectives"][2]["decimals"] == 3, "2.000 / 0.500 / 1.000");

  // One objective: an empty front.
  cerebro::testing::TempDir other;
  auto single = StateStore::open(other.file("state"), true).value();
  single->put_meta("metric", "val_accuracy");
  single->put_config({0, {{"lr", 0.01}}, ConfigStatus::running, ""});
  single->commit_unit(unit(0, 0, 0, 0, 0.0, 1.0, true, 0.5), "s").value();
  view = experiment_view(ExperimentFacts{*single, false});
  BOOST_TEST(view["pareto"].empty());
  BOOST_TEST(view["pareto_objectives"].empty());
}

// The Pareto tables printed values with mixed precision (0.690000
// beside 50890.0 beside 0.00121062); a column now has one number of decimals.
BOOST_AUTO_TEST_CASE(a_pareto_column_is_printed_with_one_number_of_decimals) {
  const auto accuracy = *parse_objective("val_accuracy");
  const auto parameters = *parse_objective("parameters");
  const auto inference = *parse_objective("inference_ms");
  const auto seconds = *parse_objective("train_seconds");
  BOOST_TEST(objective_decimals(accuracy, {0.69, 0.6512}) == 4);
  BOOST_TEST(objective_decimals(accuracy, {1.0, 0.5}) == 3);
  BOOST_TEST(objective_decimals(parameters, {50890, 1234.0}) == 0);
  BOOST_TEST(objective_decimals(inference, {0.00121062, 0.0035}) == 6);
  BOOST_TEST(objective_decimals(seconds, {12.345, 140.2}) == 1);
  BOOST_TEST(objective_decimals(seconds, {123456.0}) == 0);
  BOOST_TEST(objective_decimals(inference, {1e-12}) == 8, "at most 8 decimals");
  BOOST_TEST(objective_decimals(inference, {}) == 4);
  BOOST_TEST(format_objective_value(0.69, 4) == "0.6900");
  BOOST_TEST(format_objective_value(50890, 0) == "50890");
  BOOST_TEST(format_objective_value(0.00121062, 6) == "0.001211");
  BOOST_TEST(format_objective_value(std::nan(""), 2) == "-");

  // The table after a run follows the same rule.
  nlohmann::json summary = {
      {"objectives",
       {{{"name", "val_accuracy"}, {"direction", "maximize"}},
        {{"name", "parameters"}, {"direction", "minimize"}},
        {{"name", "inference_ms"}, {"direction", "minimize"}}}},
      {"pareto_front",
       {{{"id", 3}, {"values", {{"val_accuracy", 0.69}, {"parameters", 50890}, {"inference_ms", 0.00121062}}}},
        {{"id", 1}, {"values", {{"val_accuracy", 0.5}, {"parameters", 1200}, {"inference_ms", 0.0009}}}}}}};
  const auto table = format_pareto_front(summary);
  BOOST_TEST(table.find("0.6900") != std::string::npos, table);
  BOOST_TEST(table.find("0.5000") != std::string::npos, table);
  BOOST_TEST(table.find("50890 ") != std::string::npos, table);
  BOOST_TEST(table.find("0.001211") != std::string::npos, table);
  BOOST_TEST(table.find("0.000900") != std::string::npos, table);
  BOOST_TEST(table.find("50890.0") == std::string::npos, table);
  BOOST_TEST(table.find("0.690000") == std::string::npos, table);
}

// A worker takes its next unit while the previous one commits:
// its busy time ends at the result (worker_end_s), not at the commit.
BOOST_AUTO_TEST_CASE(metrics_count_a_workers_time_up_to_its_result_not_the_commit) {
  nlohmann::json status = {{"experiments", {{{"id", "e-1"}, {"status", "running"}}}}};
  nlohmann::json units = nlohmann::json::array();
  units.push_back({{"worker", 0},
                   {"start_s", 0.0},
                   {"result_s", 1.0},
                   {"worker_end_s", 1.0},
                   {"end_s", 1.3},
                   {"train_s", 0.95},
                   {"validate_s", 0.0}});
  units.push_back({{"worker", 0},
                   {"start_s", 1.0},
                   {"result_s", 3.0},
                   {"worker_end_s", 3.0},
                   {"end_s", 3.2},
                   {"train_s", 1.95},
                   {"validate_s", 0.0}});
  auto text = render_metrics(status, {{"e-1", units}});
  BOOST_TEST_INFO(text);
  BOOST_TEST(has(text, "cerebro_worker_busy_seconds_total{experiment=\"e-1\",worker=\"0\"} 3\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_sum{experiment=\"e-1\"} 3\n"));
  // Hops of 0.05 s each (up to the commit they would be 0.35 and 0.25 s).
  BOOST_TEST(has(text, "cerebro_hop_duration_seconds_bucket{experiment=\"e-1\",le=\"0.1\"} 2\n"));
}

BOOST_AUTO_TEST_CASE(metrics_render_counters_gauges_and_histograms) {
  nlohmann::json status = {
      {"agents", {{{"name", "node-\"a\""}, {"workers", 2}, {"speed", 3.5}, {"running", {"e: config 0"}}}}},
      {"experiments",
       {{{"id", "e-1"},
         {"status", "running"},
         {"units_done", 3},
         {"units_total", 12},
         {"units_running", 1},
         {"units_failed", 2}},
        {{"id", "e-0"}, {"status", "completed"}, {"units_done", 4}, {"units_total", 4}}}}};
  nlohmann::json units = nlohmann::json::array();
  units.push_back({{"worker", 0}, {"start_s", 0.0}, {"end_s", 0.4}, {"train_s", 0.35}, {"validate_s", 0.0}});
  units.push_back({{"worker", 1}, {"start_s", 0.0}, {"end_s", 3.0}, {"train_s", 2.0}, {"validate_s", 0.5}});
  units.push_back({{"worker", 0}, {"start_s", 0.5}, {"end_s", 1.5}, {"train_s", 1.0}, {"validate_s", 0.0}});
  units.push_back({{"worker", 0}, {"start_s", 2.0}, {"end_s", 9.0}, {"rolled_back", true}});
  auto text = render_metrics(status, {{"e-1", units}});
  BOOST_TEST_INFO(text);
  BOOST_TEST(has(text, "# TYPE cerebro_agents_up gauge\ncerebro_agents_up 1\n"));
  BOOST_TEST(has(text, "cerebro_agent_workers{agent=\"node-\\\"a\\\"\"} 2\n"), "label values escaped");
  BOOST_TEST(has(text, "cerebro_agent_busy_workers{agent=\"node-\\\"a\\\"\"} 1\n"));
  BOOST_TEST(has(text, "cerebro_experiment_progress{experiment=\"e-1\"} 0.25\n"));
  BOOST_TEST(has(text, "cerebro_experiment_progress{experiment=\"e-0\"} 1\n"));
  BOOST_TEST(has(text, "cerebro_queue_depth{experiment=\"e-1\"} 8\n"));
  BOOST_TEST(has(text, "cerebro_queue_depth{experiment=\"e-0\"} 0\n"));
  BOOST_TEST(
      has(text, "# TYPE cerebro_units_failed_total counter\ncerebro_units_failed_total{experiment=\"e-1\"} 2\n"));
  BOOST_TEST(has(text, "cerebro_units_completed_total{experiment=\"e-1\"} 3\n"), "rolled-back units do not count");
  BOOST_TEST(has(text, "cerebro_units_completed_total{experiment=\"e-0\"} 0\n"));
  BOOST_TEST(has(text, "cerebro_worker_busy_seconds_total{experiment=\"e-1\",worker=\"0\"} 1.4\n"));
  BOOST_TEST(has(text, "cerebro_worker_busy_seconds_total{experiment=\"e-1\",worker=\"1\"} 3\n"));
  BOOST_TEST(has(text, "# TYPE cerebro_unit_duration_seconds histogram\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_bucket{experiment=\"e-1\",le=\"0.5\"} 1\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_bucket{experiment=\"e-1\",le=\"1\"} 2\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_bucket{experiment=\"e-1\",le=\"+Inf\"} 3\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_count{experiment=\"e-1\"} 3\n"));
  BOOST_TEST(has(text, "cerebro_unit_duration_seconds_sum{experiment=\"e-1\"} 4.4\n"));
  // Hops: 0.05, 0.5 and 0 seconds outside training and validation.
  BOOST_TEST(has(text, "cerebro_hop_duration_seconds_bucket{experiment=\"e-1\",le=\"0.1\"} 2\n"));
  BOOST_TEST(has(text, "cerebro_hop_duration_seconds_bucket{experiment=\"e-1\",le=\"0.5\"} 3\n"));
  auto buckets = cumulative_buckets({0.2, 1, 7}, {0.5, 1, 5});
  BOOST_TEST((buckets == std::vector<uint64_t>{1, 2, 2}));
  BOOST_TEST(escape_label("a\\b\n") == "a\\\\b\\n");
}

// A model file inside the spec's folder is shown as the spec named it, and read back there when a
// config is cloned or added with it; a zoo model, a file elsewhere and other values stay as they are.
BOOST_AUTO_TEST_CASE(model_files_are_shown_relative_to_the_specs_folder_and_read_back_there) {
  const std::string dir = "/state/uploads/ab12";
  const nlohmann::json stored = {{"model", "/state/uploads/ab12/models/net.pt"}, {"lr", 0.1}};
  const auto shown = params_as_submitted(stored, dir);
  BOOST_TEST(shown == nlohmann::json({{"model", "models/net.pt"}, {"lr", 0.1}}));
  BOOST_TEST(params_on_server(shown, dir) == stored);
  const nlohmann::json elsewhere = {{"model", "/state/uploads/ab123/net.pt"}};
  BOOST_TEST(params_as_submitted(elsewhere, dir) == elsewhere);
  const nlohmann::json zoo = {{"model", "cnn"}, {"note", "x.txt"}};
  BOOST_TEST(params_as_submitted(zoo, dir) == zoo);
  BOOST_TEST(params_on_server(zoo, dir) == zoo);
  BOOST_TEST(params_as_submitted(stored, "") == stored);
  BOOST_TEST(params_on_server(nlohmann::json({{"model", "/abs/net.pt"}}), dir) ==
             nlohmann::json({{"model", "/abs/net.pt"}}));
}
