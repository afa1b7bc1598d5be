// The coordinator's protocols with its peers, on CAF's deterministic
// scheduler (caf/test/dsl.hpp): every message is delivered when the test
// says so and time moves only when the test advances it. The coordinator is
// the real one; what it would spawn (an experiment's runner, the reader of
// ended runs) and read (its state directory) are fakes (coordinator_parts),
// and the peers that would train are plain typed actors written here.
#define CAF_SUITE coordinator

#include <memory>
#include <string>
#include <vector>

#include <caf/test/dsl.hpp>
#include <caf/test/unit_test_impl.hpp>

#include <nlohmann/json.hpp>

#include "actors/agent_heartbeat.hpp"
#include "actors/coordinator.hpp"
#include "actors/experiment_runner.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/net/messages.hpp"

using namespace cerebro;

namespace {

const std::string kToken = "a-test-token-of-some-length";

// An experiment spec the gateway parses (its data is never read: no runner trains).
std::string spec_text(const std::string& name, double heartbeat_timeout_s = 5) {
  return "[experiment]\nname = \"" + name +
         "\"\nepochs = 2\n[data]\nsource = \"csv\"\ntrain = \"/data/none.csv\"\nlabel_column = \"y\"\n"
         "[cluster]\nheartbeat_timeout = " +
         std::to_string(heartbeat_timeout_s) + "\n[space]\nmodel = [\"mlp\"]\nlr = [0.01]\n";
}

struct test_config : caf::actor_system_config {
  test_config() {
    register_message_types(*this);
    register_cluster_message_types(*this);
  }
};

// What the coordinator's fake parts and the fake peers saw.
struct Seen {
  std::vector<RunOptions> runs;                      // runners the coordinator started
  std::vector<std::vector<std::string>> run_agents;  // the agents each run got
  std::vector<std::string> dropped_stores;           // the reader told to close a store
  std::vector<uint64_t> reader_generations;          // generations the reader was asked with
  std::vector<std::string> lost;                     // agents the follower heard are lost
  std::vector<std::string> joined;                   // agents the follower heard joined
};

// A client's record: the answers to its requests and what it received.
struct ClientRecord {
  coordinator_actor gateway;
  std::vector<std::string> answers;
  std::vector<Status> errors;
  std::vector<progress_update> progress;
  std::vector<run_files> files;
};

// A client of the gateway (what `run --cluster` and `attach` hold): it takes
// what clients take, and the test tells it to submit or attach.
using fake_client_actor =
    client_actor::extend<caf::reacts_to<submit_atom, std::string>, caf::reacts_to<attach_atom, std::string>>;

fake_client_actor::behavior_type fake_client(fake_client_actor::pointer self, std::shared_ptr<ClientRecord> r) {
  auto answered = [r](const std::string& answer) { r->answers.push_back(answer); };
  auto failed = [r](const caf::error& e) { r->errors.push_back(to_status(e)); };
  return {
      [r](progress_atom, const progress_update& p) { r->progress.push_back(p); },
      [r](files_atom, const run_files& files) { r->files.push_back(files); },
      [self, r, answered, failed](submit_atom, const std::string& spec) {
        self->request(r->gateway, caf::infinite, submit_atom::value, submit_request{kToken, spec, "", "test.toml", 0})
            .then(answered, failed);
      },
      [self, r, answered, failed](attach_atom, const std::string& experiment) {
        self->request(r->gateway, caf::infinite, attach_atom::value, kToken, experiment).then(answered, failed);
      },
  };
}

// The actor following a run (actors/run_follower.cpp trains; this one only listens).
run_follower_actor::behavior_type fake_follower(std::shared_ptr<Seen> seen) {
  return {
      [](progress_atom, const progress_update&) {},
      [](done_atom, const experiment_done&) {},
      [](worker_lost_atom, WorkerId, const worker_actor&) {},
      [seen](join_atom, const std::string& name, const agent_actor&, const std::vector<worker_actor>&) {
        seen->joined.push_back(name);
      },
      [seen](agent_lost_atom, const std::string& name) { seen->lost.push_back(name); },
      [](control_atom, const control_request& r) {
        return control_reply{r.experiment, R"({"from":"follower"})", ""};
      },
      [](start_atom) { return true; },
      [](done_atom) { return experiment_done{}; },
  };
}

finished_run_reader_actor::behavior_type fake_reader(std::shared_ptr<Seen> seen) {
  return {
      [seen](control_atom, const control_request& r, const std::string&, uint64_t generation) {
        seen->reader_generations.push_back(generation);
        return control_reply{r.experiment, R"({"from":"reader"})", ""};
      },
      [seen](drop_store_atom, const std::string& experiment) { seen->dropped_stores.push_back(experiment); },
  };
}

// Stands in for an agent's or a worker's actor: the coordinator only keeps
// and monitors these handles (the runner, a fake here, would use them).
caf::behavior stand_in() {
  return {[](int) {}};
}

// The gateway an agent finds at its coordinator's address: whatever `current` is now.
gateway_finder_actor::behavior_type fake_finder(std::shared_ptr<coordinator_actor> current) {
  return {[current](find_gateway_atom) { return *current; }};
}

// A coordinator's address as the agent's middleman sees it: the handle stays
// the same while the coordinator behind it restarts (the messages it relays
// keep their sender, as a remote proxy's do).
using gateway_address_actor = caf::typed_actor<caf::replies_to<join_atom, join_request>::with<join_reply>,
                                               caf::replies_to<heartbeat_atom, int32_t>::with<bool>>;

gateway_address_actor::behavior_type fake_address(gateway_address_actor::pointer self,
                                                  std::shared_ptr<coordinator_actor> current) {
  return {
      [self, current](join_atom, join_request& r) { return self->delegate(*current, join_atom::value, std::move(r)); },
      [self, current](heartbeat_atom, int32_t id) { return self->delegate(*current, heartbeat_atom::value, id); },
  };
}

struct HeartbeatRecord {
  std::vector<int32_t> joined;
  std::vector<std::string> lost;
  std::vector<std::string> refused;
};

struct fixture : test_coordinator_fixture<test_config> {
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  std::vector<StoredRun> unfinished;  // what the next coordinator finds in its state directory
  std::vector<caf::actor> to_stop;    // actors with timers of their own, ended before the fixture

  ~fixture() override {
    for (auto& a : to_stop) caf::anon_send_exit(a, caf::exit_reason::kill);
    consume_messages();
  }

  coordinator_actor spawn_gateway(double heartbeat_timeout_s = 30) {
    coordinator_config config{kToken, "/state", "test", heartbeat_timeout_s};
    config.parts.start_run = [seen = seen](caf::local_actor*, const RunOptions& options, const ClusterView& cluster) {
      seen->runs.push_back(options);
      std::vector<std::string> names;
      for (const auto& a : cluster.agents) names.push_back(a.name);
      seen->run_agents.push_back(names);
    };
    config.parts.spawn_reader = [seen = seen](caf::local_actor* gateway) {
      return gateway->spawn<caf::linked>(fake_reader, seen);
    };
    config.parts.find_stored = [runs = unfinished](const std::string&) { return runs; };
    auto gateway = spawn_coordinator(sys, config);
    to_stop.push_back(caf::actor_cast<caf::actor>(gateway));
    consume_messages();
    return gateway;
  }

  // Asks `to` from the test's scoped actor and delivers every message
  // until nothing is left to do now: the answer, or its error.
  template <class T, class Handle, class... Ts>
  Result<T> ask(const Handle& to, Ts... xs) {
    auto pending = self->request(to, caf::infinite, std::move(xs)...);
    consume_messages();
    Result<T> out = Status::internal("no answer");
    pending.receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = to_status(e); });
    return out;
  }

  caf::actor stand_in_actor() { return sys.spawn(stand_in); }

  join_request join_as(const std::string& name, int32_t workers = 1) {
    std::vector<worker_actor> handles;
    for (int i = 0; i < workers; ++i) handles.push_back(caf::actor_cast<worker_actor>(stand_in_actor()));
    return join_request{kToken, agent_resources{name, workers, 4, 1 << 30, 1.0},
                        caf::actor_cast<agent_actor>(stand_in_actor()), handles};
  }

  join_reply join(const coordinator_actor& gateway, const join_request& request) {
    auto reply = ask<join_reply>(gateway, join_atom::value, request);
    CAF_REQUIRE(reply.ok());
    return *reply;
  }

  std::pair<fake_client_actor, std::shared_ptr<ClientRecord>> client(const coordinator_actor& gateway) {
    auto record = std::make_shared<ClientRecord>();
    record->gateway = gateway;
    return {sys.spawn(fake_client, record), record};
  }

  nlohmann::json status(const coordinator_actor& gateway) {
    auto text = ask<std::string>(gateway, status_atom::value, kToken);
    CAF_REQUIRE(text.ok());
    return nlohmann::json::parse(*text);
  }

  // One second at a time: `each` (e.g. heartbeats) runs before each step.
  void pass(int seconds, const std::function<void()>& each = {}) {
    for (int i = 0; i < seconds; ++i) {
      if (each) each();
      advance_time(std::chrono::seconds(1));
      consume_messages();
    }
  }

  // The runner's side of a run: it started training with `follower`.
  void training_started(const coordinator_actor& gateway, const std::string& experiment,
                        const run_follower_actor& follower) {
    self->send(gateway, run_started_atom::value, experiment, follower);
    consume_messages();
  }
};

int count(const std::vector<std::string>& xs, const std::string& x) {
  return static_cast<int>(std::count(xs.begin(), xs.end(), x));
}

}  // namespace

CAF_TEST_FIXTURE_SCOPE(coordinator_protocols, fixture)

// Each refusal is an answer (the agent prints it and exits), not an error;
// the refused agents leave no trace in the cluster.
CAF_TEST(a join is refused for each reason) {
  auto gateway = spawn_gateway();
  auto wrong = join_as("a");
  wrong.token = "not-the-token";
  auto reply = join(gateway, wrong);
  CAF_CHECK(!reply.accepted);
  CAF_CHECK_EQUAL(reply.reason, "wrong token");
  CAF_CHECK(!reply.coordinator);

  auto bad = join_as("a");
  bad.resources.workers = 0;
  bad.workers.clear();
  reply = join(gateway, bad);
  CAF_CHECK(!reply.accepted);
  CAF_CHECK_EQUAL(reply.reason, "workers must be 1..1024, got 0");

  auto no_agent = join_as("a");
  no_agent.agent = agent_actor{};
  CAF_CHECK_EQUAL(join(gateway, no_agent).reason, "malformed join request");
  auto missing_worker = join_as("a", 2);
  missing_worker.workers.pop_back();
  CAF_CHECK_EQUAL(join(gateway, missing_worker).reason, "malformed join request");

  reply = join(gateway, join_as("a"));
  CAF_CHECK(reply.accepted);
  CAF_CHECK_EQUAL(reply.agent_id, 1);
  CAF_CHECK(reply.coordinator == gateway);
  reply = join(gateway, join_as("a"));
  CAF_CHECK(!reply.accepted);
  CAF_CHECK_EQUAL(reply.reason, "an agent named a is already joined");
  CAF_CHECK_EQUAL(status(gateway)["agents"].size(), 1u);
}

// What a client branches on: the code, not the text (it retries only on unavailable).
CAF_TEST(refusals reach clients with their codes) {
  auto gateway = spawn_gateway();
  auto wrong = ask<std::string>(gateway, status_atom::value, std::string("guess"));
  CAF_CHECK(wrong.code() == StatusCode::invalid_argument);
  CAF_CHECK_EQUAL(wrong.error(), "wrong token");
  auto early = ask<std::string>(gateway, submit_atom::value, submit_request{kToken, spec_text("e"), "", "e.toml", 0});
  CAF_CHECK(early.code() == StatusCode::unavailable);
  CAF_CHECK_EQUAL(early.error(), "no agent has joined the cluster yet");
  auto bad_spec = ask<std::string>(gateway, submit_atom::value,
                                   submit_request{kToken, "[experiment]\nepochz = 1\n", "", "bad.toml", 0});
  CAF_CHECK(bad_spec.code() == StatusCode::invalid_argument);
  auto intruder =
      ask<std::string>(gateway, submit_atom::value, submit_request{"guess", spec_text("e"), "", "e.toml", 0});
  CAF_CHECK(intruder.code() == StatusCode::invalid_argument);
  auto missing = ask<std::string>(gateway, attach_atom::value, kToken, std::string("nope"));
  CAF_CHECK(missing.code() == StatusCode::not_found);
  CAF_CHECK_EQUAL(missing.error(), "no experiment nope on this coordinator");
  auto none = ask<control_reply>(gateway, control_atom::value, control_request{kToken, "", SteeringCommand::show});
  CAF_CHECK(none.code() == StatusCode::not_found);
  CAF_CHECK_EQUAL(none.error(), "no experiment has been submitted yet");
  auto hop = ask<int64_t>(gateway, hop_atom::value, std::string("guess"), std::string("state"));
  CAF_CHECK(hop.code() == StatusCode::invalid_argument);
  CAF_CHECK(seen->runs.empty());
}

// The same spec while its experiment is unfinished: the second client follows
// the first one's experiment, and both hear its progress and get its files.
CAF_TEST(a resubmission is followed instead of started twice) {
  auto gateway = spawn_gateway();
  join(gateway, join_as("a"));
  auto [first, first_seen] = client(gateway);
  auto [second, second_seen] = client(gateway);
  self->send(first, submit_atom::value, spec_text("twice"));
  consume_messages();
  CAF_REQUIRE_EQUAL(first_seen->answers.size(), 1u);
  const auto id = first_seen->answers[0];
  CAF_REQUIRE_EQUAL(seen->runs.size(), 1u);
  CAF_CHECK_EQUAL(seen->runs[0].experiment_id, id);
  CAF_CHECK(!seen->runs[0].resume);
  CAF_CHECK_EQUAL(seen->runs[0].out_dir, "/state/experiments/" + id);
  CAF_CHECK(seen->run_agents[0] == std::vector<std::string>{"a"});

  self->send(second, submit_atom::value, spec_text("twice"));
  consume_messages();
  CAF_REQUIRE_EQUAL(second_seen->answers.size(), 1u);
  CAF_CHECK_EQUAL(second_seen->answers[0], id);
  CAF_CHECK_EQUAL(seen->runs.size(), 1u);

  progress_update p;
  p.units_done = 4;
  p.units_total = 8;
  self->send(gateway, progress_atom::value, id, p);
  expect((progress_atom, std::string, progress_update), from(self).to(gateway).with(_, id, _));
  expect((progress_atom, progress_update), from(gateway).to(first).with(_, _));
  expect((progress_atom, progress_update), from(gateway).to(second).with(_, _));
  CAF_CHECK_EQUAL(first_seen->progress.at(0).units_done, 4);
  CAF_CHECK_EQUAL(second_seen->progress.at(0).units_done, 4);
  self->send(gateway, run_ended_atom::value, id, true, run_files{id, "", {"summary.json"}, {"{}"}});
  consume_messages();
  CAF_REQUIRE_EQUAL(first_seen->files.size(), 1u);
  CAF_REQUIRE_EQUAL(second_seen->files.size(), 1u);
  CAF_CHECK(second_seen->files[0].names == std::vector<std::string>{"summary.json"});

  // Once it ended the same spec is a new experiment.
  self->send(second, submit_atom::value, spec_text("twice"));
  consume_messages();
  CAF_REQUIRE_EQUAL(second_seen->answers.size(), 2u);
  CAF_CHECK_NOT_EQUAL(second_seen->answers[1], id);
  CAF_CHECK_EQUAL(seen->runs.size(), 2u);
}

// An agent that stops sending heartbeats is lost to the running experiment
// after the spec's timeout (5 s); dropped from the cluster later (the
// coordinator's 20 s), it is not reported again. One whose connection
// closes is reported at once. A new agent is announced.
CAF_TEST(an agent lost while an experiment runs reaches its follower once) {
  auto gateway = spawn_gateway(20);
  auto a = join(gateway, join_as("a")).agent_id;
  auto b_request = join_as("b");
  auto b = join(gateway, b_request).agent_id;
  auto [submitter, record] = client(gateway);
  self->send(submitter, submit_atom::value, spec_text("lossy", 5));
  consume_messages();
  CAF_REQUIRE_EQUAL(record->answers.size(), 1u);
  const auto id = record->answers[0];
  auto follower = sys.spawn(fake_follower, seen);
  training_started(gateway, id, follower);

  auto b_beats = [&] { CAF_CHECK(*ask<bool>(gateway, heartbeat_atom::value, b)); };
  pass(5, b_beats);
  CAF_CHECK(seen->lost.empty());
  b_beats();
  advance_time(std::chrono::seconds(1));
  expect((tick_atom), from(gateway).to(gateway));
  expect((agent_lost_atom, std::string), from(gateway).to(follower).with(_, std::string("a")));
  pass(20, b_beats);  // a is dropped from the cluster at 21 s
  CAF_CHECK_EQUAL(count(seen->lost, "a"), 1);
  CAF_CHECK(!*ask<bool>(gateway, heartbeat_atom::value, a));
  CAF_CHECK_EQUAL(status(gateway)["agents"].size(), 1u);

  join(gateway, join_as("c"));
  CAF_CHECK(seen->joined == std::vector<std::string>{"c"});

  caf::anon_send_exit(b_request.agent, caf::exit_reason::kill);  // b's connection closes
  consume_messages();
  CAF_CHECK_EQUAL(count(seen->lost, "b"), 1);
  pass(30);  // c is silent too: lost once, then dropped
  CAF_CHECK(seen->lost == (std::vector<std::string>{"a", "b", "c"}));
}

// A follower (run --cluster, attach) whose coordinator restarted attaches
// to the new one, which found the run unfinished in its state directory:
// it waits for agents, resumes, and its progress and files reach the
// follower; a client submitting the same spec again follows it too.
CAF_TEST(a follower reconnects to a restarted coordinator) {
  auto before = spawn_gateway();
  join(before, join_as("a"));
  auto [follower_client, record] = client(before);
  self->send(follower_client, submit_atom::value, spec_text("restarted"));
  consume_messages();
  CAF_REQUIRE_EQUAL(record->answers.size(), 1u);
  const auto id = record->answers[0];
  caf::anon_send_exit(before, caf::exit_reason::kill);  // the coordinator's process died
  consume_messages();

  unfinished.push_back(StoredRun{id, ExperimentFacts{"restarted", "val_accuracy", spec_text("restarted"), 5},
                                 "/state/experiments/" + id});
  auto after = spawn_gateway();
  seen->runs.clear();
  seen->dropped_stores.clear();
  record->gateway = after;
  self->send(follower_client, attach_atom::value, id);
  consume_messages();
  CAF_REQUIRE_EQUAL(record->answers.size(), 2u);
  CAF_CHECK_EQUAL(record->answers[1], R"({"metric":"val_accuracy","status":"waiting"})");
  auto [resubmitter, again] = client(after);
  self->send(resubmitter, submit_atom::value, spec_text("restarted"));
  consume_messages();
  CAF_REQUIRE_EQUAL(again->answers.size(), 1u);
  CAF_CHECK_EQUAL(again->answers[0], id);

  pass(5);
  CAF_CHECK(seen->runs.empty());  // no agent yet
  auto a = join(after, join_as("a")).agent_id;
  pass(3, [&] { ask<bool>(after, heartbeat_atom::value, a); });
  CAF_CHECK(seen->runs.empty());  // agents may still be rejoining
  pass(1, [&] { ask<bool>(after, heartbeat_atom::value, a); });
  CAF_REQUIRE_EQUAL(seen->runs.size(), 1u);
  CAF_CHECK_EQUAL(seen->runs[0].experiment_id, id);
  CAF_CHECK(seen->runs[0].resume);
  CAF_CHECK_EQUAL(seen->runs[0].out_dir, "/state/experiments/" + id);
  CAF_CHECK_EQUAL(count(seen->dropped_stores, id), 1);

  self->send(after, run_line_atom::value, id, std::string("resumed from the unit log"));
  consume_messages();
  CAF_REQUIRE_EQUAL(record->progress.size(), 1u);
  CAF_CHECK_EQUAL(record->progress[0].event, "resumed from the unit log");
  CAF_CHECK_EQUAL(again->progress.size(), 1u);
  self->send(after, run_ended_atom::value, id, true, run_files{id, "", {}, {}});
  consume_messages();
  CAF_REQUIRE_EQUAL(record->files.size(), 1u);
  CAF_CHECK_EQUAL(record->files[0].experiment, id);
  CAF_CHECK_EQUAL(again->files.size(), 1u);
}

// Steering goes to the run's follower once training started, reads of an
// ended run to the reader (with the generation its status moved to), and
// the answers' codes say when to ask again.
CAF_TEST(steering and reads are routed by the state of the experiment) {
  auto gateway = spawn_gateway();
  join(gateway, join_as("a"));
  auto [submitter, record] = client(gateway);
  self->send(submitter, submit_atom::value, spec_text("steered"));
  consume_messages();
  const auto id = record->answers.at(0);
  auto pause = control_request{kToken, id, SteeringCommand::pause};
  auto setting_up = ask<control_reply>(gateway, control_atom::value, pause);
  CAF_CHECK(setting_up.code() == StatusCode::unavailable);
  training_started(gateway, id, sys.spawn(fake_follower, seen));
  auto paused = ask<control_reply>(gateway, control_atom::value, control_request{kToken, "", SteeringCommand::pause});
  CAF_REQUIRE(paused.ok());
  CAF_CHECK_EQUAL(paused->json, R"({"from":"follower"})");
  CAF_CHECK_EQUAL(paused->experiment, id);

  self->send(gateway, run_ended_atom::value, id, false, run_files{id, "diverged", {}, {}});
  consume_messages();
  auto ended = ask<control_reply>(gateway, control_atom::value, pause);
  CAF_CHECK(ended.code() == StatusCode::failed_precondition);
  auto read = ask<control_reply>(gateway, control_atom::value, control_request{kToken, id, SteeringCommand::top});
  CAF_REQUIRE(read.ok());
  CAF_CHECK_EQUAL(read->json, R"({"from":"reader"})");
  CAF_CHECK(seen->reader_generations == std::vector<uint64_t>{2});  // started, then failed

  // Attaching to the failed experiment: its files (the failure) at once.
  auto [late, late_seen] = client(gateway);
  self->send(late, attach_atom::value, id);
  consume_messages();
  CAF_CHECK_EQUAL(late_seen->answers.at(0), R"({"metric":"val_accuracy","status":"failed"})");
  CAF_REQUIRE_EQUAL(late_seen->files.size(), 1u);
  CAF_CHECK_EQUAL(late_seen->files[0].error, "diverged");  // the run's own reason
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

struct membership_fixture : fixture {
  std::shared_ptr<coordinator_actor> current = std::make_shared<coordinator_actor>();
  std::shared_ptr<HeartbeatRecord> heard = std::make_shared<HeartbeatRecord>();

  agent_heartbeat_actor spawn_heartbeat(const gateway_finder_actor& finder, const std::string& name) {
    agent_heartbeat_config config;
    config.join = join_as(name);
    config.finder = finder;
    config.events.joined = [heard = heard](int32_t id) { heard->joined.push_back(id); };
    config.events.lost = [heard = heard](const std::string& why) { heard->lost.push_back(why); };
    config.events.refused = [heard = heard](const std::string& reason) { heard->refused.push_back(reason); };
    auto heartbeat = spawn_agent_heartbeat(sys, std::move(config));
    to_stop.push_back(caf::actor_cast<caf::actor>(heartbeat));
    consume_messages();
    return heartbeat;
  }

  std::vector<std::string> agents_of(const coordinator_actor& gateway) {
    std::vector<std::string> names;
    auto cluster = status(gateway);
    for (const auto& a : cluster["agents"]) names.push_back(a["name"].get<std::string>());
    return names;
  }
};

}  // namespace

CAF_TEST_FIXTURE_SCOPE(agent_membership, membership_fixture)

// The coordinator's process died: the agent hears its connection close,
// finds the restarted coordinator and joins it.
CAF_TEST(an agent rejoins a restarted coordinator whose connection closed) {
  *current = spawn_gateway();
  spawn_heartbeat(sys.spawn(fake_finder, current), "n1");
  CAF_CHECK(heard->joined == std::vector<int32_t>{1});
  CAF_CHECK(agents_of(*current) == std::vector<std::string>{"n1"});
  pass(10);  // heartbeats keep it joined
  CAF_CHECK(agents_of(*current) == std::vector<std::string>{"n1"});

  auto restarted = spawn_gateway();
  caf::anon_send_exit(*current, caf::exit_reason::kill);
  *current = restarted;
  consume_messages();
  CAF_CHECK(heard->lost == std::vector<std::string>{"connection closed"});
  CAF_CHECK(heard->joined == (std::vector<int32_t>{1, 1}));
  CAF_CHECK(agents_of(*current) == std::vector<std::string>{"n1"});
}

// The coordinator restarted behind an address whose handle the agent kept
// (its old connection never closed): its next heartbeat is answered false,
// since the new coordinator does not know the id, and the agent rejoins.
CAF_TEST(an agent whose heartbeat is answered false rejoins) {
  *current = spawn_gateway();
  auto address = sys.spawn(fake_address, current);
  auto finder_answer = std::make_shared<coordinator_actor>(caf::actor_cast<coordinator_actor>(address));
  spawn_heartbeat(sys.spawn(fake_finder, finder_answer), "n1");
  CAF_CHECK(heard->joined == std::vector<int32_t>{1});
  auto restarted = spawn_gateway();
  caf::anon_send_exit(*current, caf::exit_reason::kill);
  *current = restarted;
  consume_messages();
  CAF_CHECK(heard->lost.empty());
  pass(2);  // the next heartbeat reaches the restarted coordinator
  CAF_CHECK(heard->lost == std::vector<std::string>{kUnknownAgent});
  CAF_CHECK(heard->joined == (std::vector<int32_t>{1, 1}));
  CAF_CHECK(agents_of(restarted) == std::vector<std::string>{"n1"});
  pass(10);
  CAF_CHECK_EQUAL(heard->lost.size(), 1u);
}

// A coordinator that refuses the agent (here: a name taken) ends the heartbeat.
CAF_TEST(a refused agent stops) {
  *current = spawn_gateway();
  join(*current, join_as("n1"));
  auto heartbeat = spawn_heartbeat(sys.spawn(fake_finder, current), "n1");
  CAF_CHECK(heard->refused == std::vector<std::string>{"an agent named n1 is already joined"});
  CAF_CHECK(heard->joined.empty());
  self->monitor(heartbeat);  // already gone: the down message arrives at once
  CAF_CHECK(!self->mailbox().empty());
  self->receive([](const caf::down_msg&) {});
}

CAF_TEST_FIXTURE_SCOPE_END()
