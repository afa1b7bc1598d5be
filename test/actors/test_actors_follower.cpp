// The run follower's protocols under CAF's deterministic test scheduler:
// fake agents (placements taken, held or refused; dead workers respawned),
// fake workers and a fake checkpoint (test/actors_fakes.hpp) around the real
// follower and scheduler. Agents joining mid-run, lost, refusing shards,
// respawning workers: what otherwise only multi-process runs reach.
#define CAF_SUITE actors_follower
#include <caf/test/dsl.hpp>
#include <caf/test/unit_test_impl.hpp>

#include <atomic>
#include <memory>
#include <set>

#include "actors/run_follower_shell.hpp"
#include "actors/system_config.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "test/actors/actors_fakes.hpp"

using namespace cerebro;

namespace {

using Partitions = std::vector<PartitionId>;

struct fixture : test_coordinator_fixture<cerebro_system_config> {
  std::shared_ptr<ExperimentControl> control;
  std::map<std::string, fakes::fake_agent_actor> agents;
  std::map<std::string, std::vector<fakes::fake_worker_actor>> workers;
  fakes::fake_checkpoint_actor checkpoint;
  run_follower_actor follower;
  scheduler_actor scheduler;
  std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::atomic<int>> live_workers = std::make_shared<std::atomic<int>>(0);
  std::set<std::string> dead;

  fixture() : test_coordinator_fixture<cerebro_system_config>(system_role::embedded) {}

  ~fixture() override {
    // The fakes hold promises of the follower and the scheduler, and they
    // hold the fakes: end them all.
    for (auto& [name, a] : agents) {
      if (!dead.count(name)) {
        for (auto& w : agent(name).respawned) caf::anon_send_exit(w, caf::exit_reason::kill);
      }
      caf::anon_send_exit(a, caf::exit_reason::kill);
    }
    for (auto& [name, ws] : workers)
      for (auto& w : ws) caf::anon_send_exit(w, caf::exit_reason::kill);
    caf::anon_send_exit(checkpoint, caf::exit_reason::kill);
    if (scheduler) caf::anon_send_exit(scheduler, caf::exit_reason::kill);
    caf::anon_send_exit(follower, caf::exit_reason::kill);
    run();
  }

  // An agent and its workers, not yet part of the run.
  ClusterView::Agent make_agent(const std::string& name, int n) {
    agents[name] = sys.spawn(fakes::agent);
    ClusterView::Agent view{name, agents[name], {}};
    for (int i = 0; i < n; ++i) {
      workers[name].push_back(sys.spawn(fakes::worker));
      view.workers.push_back(workers[name].back());
    }
    return view;
  }

  // Asks `hdl` and runs until it answered (the answer must come without the
  // test's help): the answer, or the error as a Status.
  template <class T, class Handle, class... Ts>
  Result<T> ask(const Handle& hdl, Ts... xs) {
    auto handle = self->request(hdl, caf::infinite, xs...);
    run();
    Result<T> out = Status::internal("no answer");
    handle.receive([&](T& x) { out = std::move(x); }, [&](const caf::error& e) { out = to_status(e); });
    return out;
  }

  // `partitions` partitions of `replication` copies on `agents` (name,
  // workers; those in `refusing` refuse every placement); `configs` configs
  // of one epoch. The follower is spawned and asked to start: true once the
  // scheduler runs, or why not.
  Result<bool> start(int partitions, int replication, const std::vector<std::pair<std::string, int>>& start_agents,
                     int configs = 1, const std::set<std::string>& refusing = {}) {
    control = std::make_shared<ExperimentControl>(partitions, 1, Metric::val_accuracy, 3,
                                                  std::move(make_policy("randomized", 1)).value(),
                                                  std::make_unique<FixedEpochsProcedure>());
    for (ConfigId c = 0; c < configs; ++c) control->add_config(c, 1);
    follower_config config;
    for (const auto& [name, n] : start_agents) {
      config.cluster.agents.push_back(make_agent(name, n));
      agent(name).refuse = refusing.count(name) > 0;
    }
    config.partitions = partitions;
    config.replication = replication;
    datasets::Manifest manifest;
    for (PartitionId p = 0; p < partitions; ++p)
      manifest.partitions.push_back({fmt::format("part-{:04d}.bin", p), 10, 100, "crc32:00000000"});
    manifest.validation = {"validation.bin", 10, 100, "crc32:00000000"};
    config.placer = ShardPlacer("dsl", manifest, "/nonexistent", shard_server_actor{});
    config.scheduler.control = control;
    config.scheduler.experiment = "dsl";
    for (ConfigId c = 0; c < configs; ++c) config.scheduler.params_json[c] = "{}";
    checkpoint = sys.spawn(fakes::checkpoint);
    config.scheduler.checkpoint = checkpoint;
    config.live_workers = live_workers;
    config.say = [lines = lines](const std::string& line) { lines->push_back(line); };
    follower = sys.spawn(run_follower, std::move(config));
    auto started = ask<bool>(follower, start_atom::value);
    if (started.ok()) scheduler = follower_state().scheduler;
    return started;
  }

  follower_detail::follower_state& follower_state() {
    return deref<run_follower_actor::stateful_base<follower_detail::follower_state>>(follower).state;
  }
  fakes::agent_state& agent(const std::string& name) { return deref<fakes::agent_actor_type>(agents.at(name)).state; }
  fakes::worker_state& worker(const fakes::fake_worker_actor& w) { return deref<fakes::worker_actor_type>(w).state; }

  bool said(const std::string& needle) const {
    for (const auto& line : *lines)
      if (line.find(needle) != std::string::npos) return true;
    return false;
  }
  // Every live fake worker (the respawned ones too).
  std::vector<fakes::fake_worker_actor> live_fakes() {
    std::vector<fakes::fake_worker_actor> out;
    for (auto& [name, ws] : workers) {
      if (dead.count(name)) continue;
      for (auto& w : ws)
        if (!killed.count(w.id())) out.push_back(w);
      for (auto& w : agent(name).respawned) out.push_back(w);
    }
    return out;
  }
  void kill_worker(const fakes::fake_worker_actor& w) {
    killed.insert(w.id());
    caf::anon_send_exit(w, caf::exit_reason::kill);
  }
  // Answers every unit, round after round, until the scheduler is done.
  void drive_to_end() {
    for (int round = 0; round < 50 && !follower_state().outcome; ++round) {
      for (auto& w : live_fakes())
        if (!worker(w).units.empty()) self->send(w, fakes::answer_atom::value);
      run();
    }
    CAF_REQUIRE(follower_state().outcome.has_value());
  }

  std::set<caf::actor_id> killed;
};

}  // namespace

CAF_TEST_FIXTURE_SCOPE(follower_protocols, fixture)

CAF_TEST(the_start_places_each_partition_with_its_replicas_then_starts_the_scheduler) {
  CAF_REQUIRE(start(3, 2, {{"a", 1}, {"b", 1}, {"c", 1}}).ok());
  // Partition p on agents p and p+1; the validation set everywhere.
  CAF_CHECK_EQUAL(agent("a").partitions(), (Partitions{0, 2, -1}));
  CAF_CHECK_EQUAL(agent("b").partitions(), (Partitions{0, 1, -1}));
  CAF_CHECK_EQUAL(agent("c").partitions(), (Partitions{1, 2, -1}));
  CAF_CHECK(said("placed 3 partitions on 3 agents with replication 2"));
  CAF_CHECK_EQUAL(control->book().holdings(2), (Partitions{1, 2}));
  CAF_CHECK_EQUAL(live_workers->load(), 3);
}

CAF_TEST(a_start_whose_placement_fails_is_refused_with_the_agents_code_and_words) {
  auto started = start(2, 1, {{"a", 1}, {"b", 1}}, 1, {"b"});
  CAF_REQUIRE(!started.ok());
  CAF_CHECK(started.status().is_io_error());
  CAF_CHECK(started.error().find("placing part-0001.bin on b:") != std::string::npos);
  CAF_CHECK(started.error().find("the disk is full") != std::string::npos);
  // No scheduler was started, and no worker is in the schedule.
  CAF_CHECK(!scheduler);
  CAF_CHECK(control->book().workers().empty());
}

CAF_TEST(an_agent_lost_has_its_workers_leave_and_its_orphan_placed_on_the_emptiest_live_agent) {
  CAF_REQUIRE(start(3, 1, {{"a", 1}, {"b", 1}, {"c", 1}}).ok());
  self->send(follower, agent_lost_atom::value, std::string("b"));
  run();
  CAF_CHECK(said("agent b is lost (it is dead or stopped answering); its units go back to the queue"));
  CAF_CHECK(!control->book().has_worker(1));
  // a and c hold one each: a (the first) takes it, without the validation set again.
  CAF_CHECK_EQUAL(agent("a").partitions(), (Partitions{0, -1, 1}));
  CAF_CHECK(said("partition 1 lost its last replica; placed again on agent a"));
  CAF_CHECK_EQUAL(control->book().holdings(0), (Partitions{0, 1}));
  CAF_CHECK_EQUAL(live_workers->load(), 2);
  drive_to_end();
  CAF_CHECK(follower_state().outcome->error.empty());
}

CAF_TEST(an_orphan_an_agent_refuses_goes_to_the_next_emptiest) {
  CAF_REQUIRE(start(3, 1, {{"a", 1}, {"b", 1}, {"c", 1}}).ok());
  agent("a").refuse = true;
  self->send(follower, agent_lost_atom::value, std::string("b"));
  run();
  CAF_CHECK(said("partition 1 could not be placed again: placing part-0001.bin on a:"));
  CAF_CHECK(said("the disk is full"));
  CAF_CHECK(said("partition 1 lost its last replica; placed again on agent c"));
  CAF_CHECK_EQUAL(control->book().holdings(2), (Partitions{1, 2}));
  CAF_CHECK_EQUAL(control->book().holdings(0), (Partitions{0}));
}

CAF_TEST(an_agent_that_is_gone_is_lost_and_its_partitions_wait_for_a_joining_one_when_none_is_left) {
  CAF_REQUIRE(start(2, 1, {{"a", 1}, {"b", 1}}).ok());
  agent("a").refuse = true;
  dead.insert("b");
  caf::anon_send_exit(agents.at("b"), caf::exit_reason::kill);
  run();
  CAF_CHECK(said("agent b is lost (it is gone: "));
  CAF_CHECK(said("partition 1 has no live replica; waiting for an agent to join"));
  CAF_CHECK(!control->book().has_worker(1));
}

CAF_TEST(a_joining_agent_gets_its_replicas_before_its_workers_take_units) {
  CAF_REQUIRE(start(2, 1, {{"a", 1}}, 2).ok());
  auto d = make_agent("d", 1);
  agent("d").hold = true;
  self->send(follower, join_atom::value, d.name, d.agent, d.workers);
  run();
  // Its first shard is being placed: its worker is not in the schedule yet.
  CAF_CHECK_EQUAL(agent("d").partitions(), (Partitions{0}));
  CAF_CHECK(!control->book().has_worker(1));
  while (!agent("d").held.empty()) {
    self->send(agents.at("d"), fakes::answer_atom::value);
    run();
  }
  CAF_CHECK_EQUAL(agent("d").partitions(), (Partitions{0, -1}));
  CAF_CHECK(said("agent d joined mid-run: holds partitions 0"));
  CAF_REQUIRE(control->book().has_worker(1));
  CAF_CHECK_EQUAL(control->book().holdings(1), (Partitions{0}));
  CAF_CHECK_EQUAL(live_workers->load(), 2);
  drive_to_end();
  CAF_CHECK(follower_state().outcome->error.empty());
}

CAF_TEST(a_joining_agent_whose_placement_fails_takes_no_part) {
  CAF_REQUIRE(start(2, 1, {{"a", 1}}).ok());
  auto d = make_agent("d", 1);
  agent("d").refuse = true;
  self->send(follower, join_atom::value, d.name, d.agent, d.workers);
  run();
  CAF_CHECK(
      said("agent d joined but could not take partitions, so it takes no part in this run: placing "
           "part-0000.bin on d:"));
  CAF_CHECK(!control->book().has_worker(1));
  CAF_CHECK_EQUAL(live_workers->load(), 1);
  // Lost later, it was never part of the run.
  self->send(follower, agent_lost_atom::value, std::string("d"));
  run();
  CAF_CHECK(!said("agent d is lost"));
}

CAF_TEST(a_worker_that_dies_on_its_own_is_respawned_by_its_agent_under_a_fresh_id) {
  CAF_REQUIRE(start(2, 1, {{"a", 2}}, 2).ok());
  kill_worker(workers.at("a").at(0));
  run();
  CAF_CHECK(said("agent a respawned worker 0 as worker 2"));
  CAF_REQUIRE_EQUAL(agent("a").respawned.size(), 1u);
  CAF_CHECK(control->book().has_worker(2));
  CAF_CHECK_EQUAL(control->book().holdings(2), (Partitions{0, 1}));
  drive_to_end();
  CAF_CHECK(follower_state().outcome->error.empty());
}

CAF_TEST(the_end_releases_the_agents_shards_and_answers_train) {
  CAF_REQUIRE(start(2, 1, {{"a", 1}, {"b", 1}}).ok());
  drive_to_end();
  CAF_CHECK_EQUAL(agent("a").released, std::vector<std::string>{"dsl"});
  CAF_CHECK_EQUAL(agent("b").released, std::vector<std::string>{"dsl"});
  auto done = ask<experiment_done>(follower, done_atom::value);
  CAF_REQUIRE(done.ok());
  CAF_CHECK(done->error.empty());
}

CAF_TEST(a_scheduler_that_stops_without_its_done_ends_the_run_instead_of_hanging_it) {
  CAF_REQUIRE(start(1, 1, {{"a", 1}}).ok());
  caf::anon_send_exit(scheduler, caf::exit_reason::kill);
  run();
  CAF_REQUIRE(follower_state().outcome.has_value());
  CAF_CHECK_EQUAL(follower_state().outcome->error.rfind("the scheduler stopped: ", 0), 0u);
  CAF_CHECK_EQUAL(agent("a").released, std::vector<std::string>{"dsl"});
}

CAF_TEST(steering_is_refused_when_the_run_takes_none) {
  CAF_REQUIRE(start(1, 1, {{"a", 1}}).ok());
  control_request request;
  request.command = SteeringCommand::pause;
  auto refused = ask<control_reply>(follower, control_atom::value, request);
  CAF_REQUIRE(!refused.ok());
  CAF_CHECK(refused.status().is_failed_precondition());
}

CAF_TEST_FIXTURE_SCOPE_END()
