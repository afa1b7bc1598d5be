// The coordinator's plain core (runtime/cluster): its agent registry, its
// experiment table and the decisions across both, with time as numbers.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "runtime/cluster/coordinator_core.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;

namespace {

const std::string kToken = "a-token-of-sixteen-chars";

AgentLiveness::TimePoint at(double seconds) {
  return AgentLiveness::TimePoint{} +
         std::chrono::duration_cast<AgentLiveness::Clock::duration>(std::chrono::duration<double>(seconds));
}

JoinAttempt attempt(const std::string& name, int32_t workers = 2) {
  JoinAttempt a;
  a.token = kToken;
  a.resources = agent_resources{name, workers, 4, 1 << 30, 1.0};
  a.names_its_agent = true;
  a.worker_handles = workers;
  a.node = "host-" + name;
  return a;
}

ExperimentFacts facts(const std::string& name, const std::string& spec_text, double heartbeat_timeout_s = 5) {
  return ExperimentFacts{name, "val_loss", spec_text, heartbeat_timeout_s};
}

CoordinatorSettings settings(double heartbeat_timeout_s = 20) {
  return CoordinatorSettings{kToken, "/state", "127.0.0.1:7070", heartbeat_timeout_s};
}

std::vector<std::string> experiments_of(const std::vector<LostNotice>& lost) {
  std::vector<std::string> ids;
  for (const auto& n : lost) ids.push_back(n.experiment + "/" + n.agent_name);
  return ids;
}

using Strings = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(agent_registry)

BOOST_AUTO_TEST_CASE(accepted_agents_get_new_ids_that_are_never_reused) {
  AgentRegistry registry(kToken, std::chrono::seconds(10));
  auto a = registry.join(attempt("a"), at(0));
  auto b = registry.join(attempt("b"), at(1));
  BOOST_TEST(a.accepted());
  BOOST_TEST(a.id == 1);
  BOOST_TEST(b.id == 2);
  BOOST_TEST(registry.find(2)->node == "host-b");
  BOOST_TEST((registry.last_join() == at(1)));
  BOOST_TEST(registry.leave(1)->resources.name == "a");
  BOOST_TEST(!registry.leave(1));
  auto again = registry.join(attempt("a"), at(2));
  BOOST_TEST(again.id == 3);
}

BOOST_AUTO_TEST_CASE(a_join_is_refused_for_each_reason_in_order) {
  AgentRegistry registry(kToken, std::chrono::seconds(10));
  BOOST_REQUIRE(registry.join(attempt("taken"), at(0)).accepted());

  auto wrong = attempt("x", 0);  // bad resources too: the token is checked first
  wrong.token = "not-the-token-at-all";
  auto refused = registry.join(wrong, at(1));
  BOOST_TEST((refused.refusal == JoinRefusal::wrong_token));
  BOOST_TEST(refused.reason == "wrong token");
  BOOST_TEST(describe(refused, wrong) == "wrong token");

  auto bad = attempt("..hidden");
  refused = registry.join(bad, at(1));
  BOOST_TEST((refused.refusal == JoinRefusal::bad_resources));
  BOOST_TEST(refused.reason.find("must not start with '.'") != std::string::npos);
  BOOST_TEST(describe(refused, bad) == refused.reason);

  auto no_agent = attempt("y");
  no_agent.names_its_agent = false;
  refused = registry.join(no_agent, at(1));
  BOOST_TEST((refused.refusal == JoinRefusal::malformed_request));
  BOOST_TEST(refused.reason == "malformed join request");
  BOOST_TEST(describe(refused, no_agent) == "malformed request");
  auto short_of_workers = attempt("y");
  short_of_workers.worker_handles = 1;
  BOOST_TEST((registry.join(short_of_workers, at(1)).refusal == JoinRefusal::malformed_request));

  auto twin = attempt("taken");
  refused = registry.join(twin, at(1));
  BOOST_TEST((refused.refusal == JoinRefusal::name_taken));
  BOOST_TEST(refused.reason == "an agent named taken is already joined");
  BOOST_TEST(describe(refused, twin) == "name taken is taken by a live agent");
  BOOST_TEST(refused.id == -1);
  BOOST_TEST(registry.agents().size() == 1u);
  BOOST_TEST((registry.last_join() == at(0)), "a refusal is not a join");
}

BOOST_AUTO_TEST_CASE(an_empty_token_admits_nobody) {
  AgentRegistry registry("", std::chrono::seconds(10));
  auto a = attempt("a");
  a.token = "";
  BOOST_TEST((registry.join(a, at(0)).refusal == JoinRefusal::wrong_token));
}

BOOST_AUTO_TEST_CASE(heartbeats_count_only_for_live_agents_from_their_node) {
  AgentRegistry registry(kToken, std::chrono::seconds(10));
  auto id = registry.join(attempt("a"), at(0)).id;
  BOOST_TEST(!registry.heartbeat(id + 1, true, at(1)), "an id it never gave (a restarted coordinator)");
  BOOST_TEST(!registry.heartbeat(id, false, at(1)), "from another node");
  BOOST_TEST(registry.heartbeat(id, true, at(9)));
  BOOST_TEST(registry.tick(at(18)).empty());
  auto dropped = registry.tick(at(19.5));
  BOOST_REQUIRE(dropped.size() == 1u);
  BOOST_TEST(dropped[0].agent.resources.name == "a");
  BOOST_TEST(dropped[0].silence.count() == 10.5);
  BOOST_TEST(registry.empty());
  BOOST_TEST(!registry.heartbeat(id, true, at(20)), "dropped: it must rejoin");
  BOOST_TEST(registry.join(attempt("a"), at(21)).accepted(), "its name is free again");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(experiment_table)

BOOST_AUTO_TEST_CASE(new_experiments_are_named_after_their_spec_and_counted) {
  ExperimentTable table("/state");
  const auto& first = table.add_new(facts("mnist", "a"), "20260101T1200");
  BOOST_TEST(first.id == "mnist-20260101T1200-1");
  BOOST_TEST(first.run_dir == "/state/experiments/mnist-20260101T1200-1");
  BOOST_TEST((first.status == ExperimentStatus::waiting));
  BOOST_TEST(table.latest() == "mnist-20260101T1200-1");
  BOOST_TEST(table.add_new(facts("bad name!", "b"), "T").id == "experiment-T-2");
  BOOST_TEST(table.add_new(facts(std::string(40, 'n'), "c"), "T").id == std::string(32, 'n') + "-T-3");
  BOOST_TEST(table.find("")->id == table.latest());
  BOOST_TEST(!table.find("nope"));
}

BOOST_AUTO_TEST_CASE(each_change_of_status_moves_the_generation_on) {
  ExperimentTable table("/state");
  table.add_waiting("old", facts("old", "spec"), "/state/experiments/old");
  BOOST_TEST(table.find("old")->generation == 0u);
  table.start("old", {{1, at(0)}});
  BOOST_TEST((table.find("old")->status == ExperimentStatus::running));
  BOOST_TEST(table.find("old")->generation == 1u);
  BOOST_TEST(table.progressed("old", progress_update{3, 9}));
  BOOST_TEST(table.find("old")->generation == 1u, "progress is no change of status");
  BOOST_TEST(table.ended("old", false));
  BOOST_TEST((table.find("old")->status == ExperimentStatus::failed));
  BOOST_TEST(table.find("old")->generation == 2u);
  BOOST_TEST(!table.ended("unknown", true));
  // Starting what it does not have is the caller's bug.
  CEREBRO_CHECK_CONTRACT(table.start("unknown", {}), "ExperimentTable::start: no experiment unknown");
  BOOST_TEST(!table.progressed("unknown", {}));
  BOOST_TEST(!table.followed("unknown"));
}

BOOST_AUTO_TEST_CASE(only_an_unfinished_experiment_is_a_twin) {
  ExperimentTable table("/state");
  auto id = table.add_new(facts("e", "spec text"), "T").id;
  BOOST_TEST(table.unfinished_twin("spec text")->id == id, "waiting");
  table.start(id, {});
  BOOST_TEST(table.unfinished_twin("spec text")->id == id, "running");
  BOOST_TEST(!table.unfinished_twin("other text"));
  table.ended(id, true);
  BOOST_TEST(!table.unfinished_twin("spec text"), "ended: the same spec runs again");
}

BOOST_AUTO_TEST_CASE(attach_answers_status_and_metric_and_whether_the_files_come_at_once) {
  ExperimentTable table("/state");
  auto id = table.add_new(facts("e", "s"), "T").id;
  table.start(id, {});
  auto running = table.attach(id);
  BOOST_REQUIRE(running.ok());
  BOOST_TEST(running->json == R"({"metric":"val_loss","status":"running"})");
  BOOST_TEST(!running->ended);
  BOOST_TEST(running->run_dir == "/state/experiments/" + id);
  table.ended(id, false);
  auto failed = table.attach(id);
  BOOST_TEST(failed->ended);
  BOOST_TEST(failed->files_error == "the experiment failed; see the coordinator's log");
  table.ended(id, false, "[data] path: no such directory");
  BOOST_TEST(table.attach(id)->files_error == "[data] path: no such directory", "the run's own reason");
  auto missing = table.attach("nope");
  BOOST_TEST((missing.code() == StatusCode::not_found));
  BOOST_TEST(missing.error() == "no experiment nope on this coordinator");
}

// A restarted coordinator keeps the finished runs of its state directory readable: listed as completed,
// attached with their files at once, never run again; a new submission never takes one's id.
BOOST_AUTO_TEST_CASE(finished_runs_found_after_a_restart_stay_completed_and_keep_their_ids) {
  ExperimentTable table("/state");
  table.add_finished("e-T-1", facts("e", "spec"), "/state/experiments/e-T-1", 12);
  BOOST_TEST((table.find("e-T-1")->status == ExperimentStatus::completed));
  BOOST_TEST(table.find("e-T-1")->progress.units_done == 12);
  BOOST_TEST(table.find("e-T-1")->progress.units_total == 12, "the dashboard shows 12 of 12 units");
  auto attached = table.attach("e-T-1");
  BOOST_REQUIRE(attached.ok());
  BOOST_TEST(attached->ended);
  BOOST_TEST(attached->files_error.empty());
  BOOST_TEST(!table.unfinished_twin("spec"), "the same spec runs again");
  BOOST_TEST(table.warm_start_run("e-T-1")->finished);
  const auto& fresh = table.add_new(facts("e", "spec"), "T");
  BOOST_TEST(fresh.id == "e-T-2", "the id of the run found is taken");
  BOOST_TEST((table.find("e-T-1")->status == ExperimentStatus::completed));
}

BOOST_AUTO_TEST_CASE(warm_start_names_experiments_that_have_finished_or_not) {
  ExperimentTable table("/state");
  auto id = table.add_new(facts("e", "s"), "T").id;
  table.start(id, {});
  BOOST_TEST(!table.warm_start_run(id)->finished);
  BOOST_TEST(table.warm_start_run(id)->run_dir == "/state/experiments/" + id);
  table.ended(id, true);
  BOOST_TEST(table.warm_start_run(id)->finished);
  BOOST_TEST(!table.warm_start_run("elsewhere"));
}

BOOST_AUTO_TEST_CASE(a_silent_agent_is_lost_once_to_each_followed_running_experiment) {
  ExperimentTable table("/state");
  auto followed = table.add_new(facts("f", "1", 5), "T").id;
  auto unfollowed = table.add_new(facts("u", "2", 5), "T").id;
  auto waiting = table.add_new(facts("w", "3", 5), "T").id;
  table.start(followed, {{1, at(0)}, {2, at(0)}});
  table.start(unfollowed, {{1, at(0)}});
  table.followed(followed);
  table.heartbeat(2, at(4));
  using Lost = std::vector<std::pair<std::string, AgentId>>;
  BOOST_TEST((table.tick(at(5)) == Lost{}));
  BOOST_TEST((table.tick(at(6)) == Lost{{followed, 1}}));
  BOOST_TEST((table.tick(at(7)) == Lost{}), "once");
  BOOST_TEST((table.tick(at(10)) == Lost{{followed, 2}}));
  // Its runner had not reported a follower: it hears of the loss later.
  table.followed(unfollowed);
  BOOST_TEST((table.tick(at(11)) == Lost{{unfollowed, 1}}));
  BOOST_TEST(table.find(waiting)->liveness.tracks(1) == false);
}

BOOST_AUTO_TEST_CASE(joins_and_departures_reach_the_followed_running_experiments) {
  ExperimentTable table("/state");
  auto followed = table.add_new(facts("f", "1"), "T").id;
  auto unfollowed = table.add_new(facts("u", "2"), "T").id;
  auto waiting = table.add_new(facts("w", "3"), "T").id;
  table.start(followed, {});
  table.start(unfollowed, {});
  table.followed(followed);
  BOOST_TEST((table.agent_joined(7, at(0)) == Strings{followed}));
  BOOST_TEST(table.find(unfollowed)->liveness.tracks(7), "counted on, told later");
  BOOST_TEST(!table.find(waiting)->liveness.tracks(7));
  BOOST_TEST((table.agent_gone(7) == Strings{followed}));
  BOOST_TEST(!table.find(unfollowed)->liveness.tracks(7));
  BOOST_TEST(table.agent_gone(7).empty(), "once");
  BOOST_TEST(table.tick(at(100)).empty(), "a departed agent is not lost again by silence");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(coordinator_core)

BOOST_AUTO_TEST_CASE(a_wrong_token_is_an_invalid_argument) {
  CoordinatorCore core(settings());
  BOOST_TEST(core.check_token(kToken).ok());
  auto wrong = core.check_token("guess");
  BOOST_TEST((wrong.code() == StatusCode::invalid_argument));
  BOOST_TEST(wrong.message() == "wrong token");
}

BOOST_AUTO_TEST_CASE(a_submission_needs_an_agent_and_is_not_started_twice) {
  CoordinatorCore core(settings());
  auto early = core.submit(facts("e", "spec"), "T");
  BOOST_TEST((early.code() == StatusCode::unavailable), "the client may submit again once agents joined");
  BOOST_TEST(early.error() == "no agent has joined the cluster yet");
  BOOST_TEST(core.experiments().entries().empty());

  core.join(attempt("a"), at(0));
  auto first = core.submit(facts("e", "spec"), "T");
  BOOST_REQUIRE(first.ok());
  BOOST_REQUIRE(first->start);
  BOOST_TEST(first->start->experiment == first->experiment);
  BOOST_TEST(!first->start->resume);
  BOOST_TEST(first->start->run_dir == "/state/experiments/" + first->experiment);
  BOOST_TEST((core.experiments().find(first->experiment)->status == ExperimentStatus::running));
  BOOST_TEST(core.experiments().find(first->experiment)->liveness.tracks(1), "it counts on the agents there are");

  auto again = core.submit(facts("e", "spec"), "T");
  BOOST_TEST(again->experiment == first->experiment);
  BOOST_TEST(!again->start, "followed, not started twice");
  BOOST_TEST(core.experiments().entries().size() == 1u);

  auto other = core.submit(facts("e", "another spec"), "T");
  BOOST_TEST(other->start.has_value());
  BOOST_TEST(other->experiment != first->experiment);
}

BOOST_AUTO_TEST_CASE(a_resubmission_of_a_waiting_experiment_follows_it_even_without_agents) {
  CoordinatorCore core(settings());
  core.add_waiting("old-1", facts("old", "spec"), "/state/experiments/old-1");
  auto again = core.submit(facts("old", "spec"), "T");
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->experiment == "old-1");
  BOOST_TEST(!again->start);
}

BOOST_AUTO_TEST_CASE(an_agent_lost_while_an_experiment_runs_reaches_its_follower_once) {
  CoordinatorCore core(settings(20));
  core.join(attempt("a"), at(0));
  core.join(attempt("b"), at(0));
  auto e = core.submit(facts("e", "spec", 5), "T")->experiment;
  core.followed(e);
  for (double t = 1; t <= 30; t += 1) {
    core.heartbeat(2, true, at(t));  // b keeps answering, a is silent
    auto decisions = core.tick(at(t));
    if (t < 6) BOOST_TEST(decisions.lost.empty());
    if (t == 6) BOOST_TEST((experiments_of(decisions.lost) == Strings{e + "/a"}), "its own 5 s timeout");
    if (t > 6) BOOST_TEST(decisions.lost.empty(), "once, also when the cluster drops it at " << t);
    if (t == 21) {
      BOOST_REQUIRE(decisions.dropped.size() == 1u);
      BOOST_TEST(decisions.dropped[0].agent.resources.name == "a");
    }
  }
  BOOST_TEST(core.agents().agents().size() == 1u);
  // b's connection closes: it is lost at once.
  auto departure = core.leave(2);
  BOOST_REQUIRE(departure);
  BOOST_TEST((experiments_of(departure->tell) == Strings{e + "/b"}));
  BOOST_TEST(!core.leave(2));
}

BOOST_AUTO_TEST_CASE(an_agent_joining_mid_run_is_announced_to_followed_runs) {
  CoordinatorCore core(settings());
  core.join(attempt("a"), at(0));
  auto followed = core.submit(facts("f", "1"), "T")->experiment;
  auto unfollowed = core.submit(facts("u", "2"), "T")->experiment;
  core.followed(followed);
  auto joined = core.join(attempt("b"), at(1));
  BOOST_TEST(joined.decision.accepted());
  BOOST_TEST((joined.tell_followers == Strings{followed}));
  auto refused = core.join(attempt("b"), at(2));
  BOOST_TEST(!refused.decision.accepted());
  BOOST_TEST(refused.tell_followers.empty());
}

BOOST_AUTO_TEST_CASE(waiting_experiments_resume_once_agents_joined_and_the_cluster_is_quiet) {
  CoordinatorCore core(settings());
  core.add_waiting("old-1", facts("old", "spec"), "/state/experiments/old-1");
  BOOST_TEST(core.tick(at(10)).resume.empty(), "no agents");
  core.join(attempt("a"), at(10));
  BOOST_TEST(core.tick(at(12)).resume.empty(), "agents may still be rejoining");
  core.join(attempt("b"), at(12));
  core.heartbeat(1, true, at(14));
  BOOST_TEST(core.tick(at(15)).resume.empty());
  auto decisions = core.tick(at(15.5));
  BOOST_REQUIRE(decisions.resume.size() == 1u);
  BOOST_TEST(decisions.resume[0].experiment == "old-1");
  BOOST_TEST(decisions.resume[0].resume);
  BOOST_TEST(decisions.resume[0].run_dir == "/state/experiments/old-1");
  const auto* entry = core.experiments().find("old-1");
  BOOST_TEST((entry->status == ExperimentStatus::running));
  BOOST_TEST((entry->liveness.last_heard(1) == at(14)), "each agent as last heard from");
  BOOST_TEST((entry->liveness.last_heard(2) == at(12)));
  BOOST_TEST(core.tick(at(16)).resume.empty(), "resumed once");
}

BOOST_AUTO_TEST_CASE(a_restarted_coordinator_does_not_know_the_agents_of_the_old_one) {
  CoordinatorCore before(settings());
  auto id = before.join(attempt("a"), at(0)).decision.id;
  CoordinatorCore after(settings());
  BOOST_TEST(!after.heartbeat(id, true, at(1)));
  BOOST_TEST(after.join(attempt("a"), at(1)).decision.accepted());
}

BOOST_AUTO_TEST_CASE(the_status_shows_agents_with_what_they_run_and_experiments_with_their_progress) {
  CoordinatorCore core(settings());
  core.join(attempt("a"), at(0));
  auto e = core.submit(facts("e", "spec"), "T")->experiment;
  progress_update p;
  p.units_done = 3;
  p.units_total = 12;
  p.running_agents = {"a"};
  p.running_units = {"config 1 / partition 0 / epoch 0"};
  p.pareto_json = R"({"front":[]})";
  core.progressed(e, p);
  auto status = nlohmann::json::parse(core.status_json(at(2.5)));
  BOOST_TEST(status["listen"] == "127.0.0.1:7070");
  BOOST_TEST(status["latest"] == e);
  BOOST_REQUIRE(status["agents"].size() == 1u);
  BOOST_TEST(status["agents"][0]["name"] == "a");
  BOOST_TEST(status["agents"][0]["node"] == "host-a");
  BOOST_TEST(status["agents"][0]["heartbeat_age_s"].get<double>() == 2.5);
  BOOST_TEST(status["agents"][0]["running"][0] == e + ": config 1 / partition 0 / epoch 0");
  BOOST_REQUIRE(status["experiments"].size() == 1u);
  BOOST_TEST(status["experiments"][0]["status"] == "running");
  BOOST_TEST(status["experiments"][0]["units_done"] == 3);
  BOOST_TEST(status["experiments"][0]["units_running"] == 1);
  BOOST_TEST(status["experiments"][0]["metric"] == "val_loss");
  BOOST_TEST(status["experiments"][0]["pareto"]["front"].is_array());
}

BOOST_AUTO_TEST_SUITE_END()
