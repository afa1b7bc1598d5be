// The scheduler actor's protocols under CAF's deterministic test scheduler:
// fake workers, a fake checkpoint and a fake listener (test/actors_fakes.hpp)
// answer as each test directs, one message at a time, so the races that
// otherwise only multi-process runs reach happen here in a chosen order:
// a commit racing its worker's loss, a worker lost with a unit in flight,
// a gang member lost mid-step.
#define CAF_SUITE actors_scheduler
#include <caf/test/dsl.hpp>
#include <caf/test/unit_test_impl.hpp>

#include <memory>

#include "actors/system_config.hpp"
#include "runtime/run/run_control.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"
#include "test/actors/actors_fakes.hpp"

using namespace cerebro;
using fakes::key_of;
using fakes::UnitKey;

namespace {

struct fixture : test_coordinator_fixture<cerebro_system_config> {
  std::shared_ptr<ExperimentControl> control;
  std::vector<fakes::fake_worker_actor> workers;
  fakes::fake_checkpoint_actor checkpoint;
  scheduler_listener_actor listener;
  scheduler_actor scheduler;

  fixture() : test_coordinator_fixture<cerebro_system_config>(system_role::embedded) {}

  ~fixture() override {
    // The fakes hold the scheduler's promises and it holds them: end them all.
    for (auto& w : workers) caf::anon_send_exit(w, caf::exit_reason::kill);
    caf::anon_send_exit(checkpoint, caf::exit_reason::kill);
    caf::anon_send_exit(listener, caf::exit_reason::kill);
    if (scheduler) caf::anon_send_exit(scheduler, caf::exit_reason::kill);
    run();
  }

  // `configs` configs of `epochs` epochs over `partitions` partitions, on
  // `n` workers that each hold every partition; started, nothing run yet.
  void start(int partitions, int configs, int epochs, int n, Parallelism mode = Parallelism::mop) {
    control = std::make_shared<ExperimentControl>(partitions, 1, Metric::val_accuracy, 3,
                                                  std::move(make_policy("randomized", 1)).value(),
                                                  std::make_unique<FixedEpochsProcedure>());
    if (mode != Parallelism::mop) {
      ClusterSpec cluster;
      cluster.max_gang = 8;
      control->set_parallelism(mode, gang_costs(cluster));
    }
    for (ConfigId c = 0; c < configs; ++c) control->add_config(c, epochs);
    std::vector<PartitionId> all;
    for (PartitionId p = 0; p < partitions; ++p) all.push_back(p);
    scheduler_config sc;
    sc.control = control;
    sc.experiment = "dsl";
    for (ConfigId c = 0; c < configs; ++c) sc.params_json[c] = "{}";
    for (WorkerId w = 0; w < n; ++w) {
      workers.push_back(sys.spawn(fakes::worker));
      sc.workers.emplace_back(w, workers.back());
      control->add_worker(w, all);
    }
    checkpoint = sys.spawn(fakes::checkpoint);
    listener = sys.spawn(fakes::listener);
    sc.checkpoint = checkpoint;
    sc.listener = listener;
    scheduler = spawn_scheduler(sys, sc);
    self->send(scheduler, start_atom::value);
  }

  fakes::worker_state& worker(WorkerId w) {
    return deref<fakes::worker_actor_type>(workers.at(static_cast<size_t>(w))).state;
  }
  fakes::checkpoint_state& store() { return deref<fakes::checkpoint_actor_type>(checkpoint).state; }
  fakes::listener_state& heard() { return deref<fakes::listener_actor_type>(listener).state; }

  // The workers holding a unit task (or a gang task) not answered yet.
  std::vector<WorkerId> busy(bool gangs = false) {
    std::vector<WorkerId> out;
    for (WorkerId w = 0; w < static_cast<WorkerId>(workers.size()); ++w) {
      if (!alive[w]) continue;
      if (gangs ? !worker(w).gangs.empty() : !worker(w).units.empty()) out.push_back(w);
    }
    return out;
  }
  // How many times any worker was given unit `u` (alone or in a gang).
  int trained(const UnitKey& u) {
    int n = 0;
    for (WorkerId w = 0; w < static_cast<WorkerId>(workers.size()); ++w) {
      if (!alive[w]) continue;
      for (const auto& t : worker(w).trained) n += key_of(t) == u;
      for (const auto& t : worker(w).gang_tasks) n += key_of(t.unit) == u;
    }
    return n + trained_by_killed[u];
  }
  // Kills worker w (it died on its own: not its node), remembering what it trained.
  void kill(WorkerId w) {
    for (const auto& t : worker(w).trained) ++trained_by_killed[key_of(t)];
    for (const auto& t : worker(w).gang_tasks) ++trained_by_killed[key_of(t.unit)];
    alive[w] = false;
    caf::anon_send_exit(workers.at(static_cast<size_t>(w)), caf::exit_reason::kill);
  }
  void lose_agent_of(WorkerId w) { self->send(scheduler, remove_worker_atom::value, w); }
  // Worker w answers its unit tasks well; or its gang tasks, well or not.
  void finish_units(WorkerId w) { self->send(workers.at(static_cast<size_t>(w)), fakes::answer_atom::value); }
  void finish_gangs(WorkerId w, bool ok = true) {
    self->send(workers.at(static_cast<size_t>(w)), fakes::answer_atom::value, ok);
  }
  // The checkpoint makes every commit it holds durable and answers it.
  void answer_commits() { self->send(checkpoint, fakes::answer_atom::value); }

  // Answers everything, round after round, until the scheduler is done.
  void drive_to_end() {
    for (int round = 0; round < 50 && !heard().done; ++round) {
      run();
      for (auto w : busy()) finish_units(w);
      for (auto w : busy(true)) finish_gangs(w);
      run();
      answer_commits();
      run();
    }
    CAF_REQUIRE(heard().done.has_value());
  }

  // Every unit of the experiment committed exactly once.
  void check_each_unit_committed_once(int partitions, int configs, int epochs) {
    CAF_CHECK_EQUAL(store().commits.size(), static_cast<size_t>(partitions * configs * epochs));
    for (const auto& [unit, n] : store().commits) CAF_CHECK_EQUAL(n, 1);
    CAF_CHECK_EQUAL(control->units_done(), partitions * configs * epochs);
  }

  std::map<WorkerId, bool> alive{{0, true}, {1, true}, {2, true}, {3, true}};
  std::map<UnitKey, int> trained_by_killed;
};

}  // namespace

CAF_TEST_FIXTURE_SCOPE(scheduler_protocols, fixture)

// A unit's result is being committed when its worker's agent is lost: the
// unit was handed over to the book at its result, so it commits exactly once
// and is not requeued (the surviving worker never trains it).
CAF_TEST(a_unit_whose_commit_races_its_agents_loss_commits_once_and_is_not_requeued) {
  start(2, 2, 1, 2);
  store().hold = true;
  run();
  CAF_REQUIRE_EQUAL(busy().size(), 2u);
  const UnitKey unit = key_of(worker(0).units.front().first);
  finish_units(0);
  run();
  CAF_REQUIRE_EQUAL(store().held.size(), 1u);  // its commit is under way
  lose_agent_of(0);
  run();
  CAF_CHECK(heard().heard("worker 0 is lost"));
  CAF_CHECK(!control->book().has_worker(0));
  CAF_CHECK_EQUAL(trained(unit), 1);  // not requeued
  answer_commits();
  run();
  CAF_CHECK_EQUAL(store().commits[unit], 1);
  drive_to_end();
  CAF_CHECK(heard().done->error.empty());
  CAF_CHECK_EQUAL(trained(unit), 1);
  check_each_unit_committed_once(2, 2, 1);
}

// A worker lost (its agent gone) with a unit in flight: the unit is requeued
// once and runs again on the other worker from the config's last committed
// state; the lost worker's late answer does not count.
CAF_TEST(a_unit_in_flight_on_a_lost_worker_runs_again_elsewhere_from_the_last_committed_state) {
  start(2, 1, 1, 2);
  run();
  CAF_REQUIRE_EQUAL(busy().size(), 1u);
  const auto first = worker(busy()[0]).units.front().first;
  finish_units(busy()[0]);
  run();  // committed at once; the config's next unit goes out with the state it made
  CAF_REQUIRE_EQUAL(busy().size(), 1u);
  const WorkerId lost = busy()[0], other = 1 - lost;
  const auto second = worker(lost).units.front().first;
  CAF_CHECK_EQUAL(second.state, fakes::state_after(first));
  lose_agent_of(lost);
  run();
  CAF_REQUIRE_EQUAL(worker(other).units.size(), 1u);
  const auto rerun = worker(other).units.front().first;
  CAF_CHECK(key_of(rerun) == key_of(second));
  CAF_CHECK_EQUAL(rerun.state, fakes::state_after(first));  // read back from the store
  CAF_CHECK_EQUAL(rerun.attempt, 0);                        // a lost node is no failed attempt
  CAF_CHECK_EQUAL(trained(key_of(second)), 2);              // requeued once
  finish_units(lost);                                       // hung, then back: too late
  run();
  CAF_CHECK(heard().heard(fmt::format("from lost worker {} dropped", lost)));
  CAF_CHECK_EQUAL(store().commits.count(key_of(second)), 0u);
  drive_to_end();
  CAF_CHECK(heard().done->error.empty());
  CAF_CHECK_EQUAL(trained(key_of(second)), 2);
  check_each_unit_committed_once(2, 1, 1);
}

// A worker that dies on its own mid-unit: its unit is requeued as a failed
// attempt and the listener hears of the death (its agent respawns it).
CAF_TEST(a_worker_dying_mid_unit_fails_the_attempt_and_the_listener_hears_it) {
  start(1, 1, 1, 2);
  run();
  CAF_REQUIRE_EQUAL(busy().size(), 1u);
  const WorkerId dead = busy()[0], other = 1 - dead;
  const auto unit = key_of(worker(dead).units.front().first);
  kill(dead);
  run();
  CAF_CHECK_EQUAL(heard().workers_lost, std::vector<WorkerId>{dead});
  CAF_REQUIRE_EQUAL(worker(other).units.size(), 1u);
  CAF_CHECK(key_of(worker(other).units.front().first) == unit);
  CAF_CHECK_EQUAL(worker(other).units.front().first.attempt, 1);
  CAF_CHECK_EQUAL(worker(other).units.front().first.state, "init 0");
  drive_to_end();
  CAF_CHECK(heard().done->error.empty());
  check_each_unit_committed_once(1, 1, 1);
}

// A gang member dies mid-step: the whole attempt fails; the member still
// inside it drains (out of the schedule, no task) until it answers, then
// rejoins; nothing of the attempt counts, even its late good answer, and the
// units run again from the config's last committed state.
CAF_TEST(a_gang_member_lost_mid_step_fails_the_attempt_and_the_others_drain_until_they_answer) {
  start(2, 1, 1, 3, Parallelism::data);
  run();
  auto members = busy(true);
  CAF_REQUIRE_EQUAL(members.size(), 2u);
  const WorkerId inside = members[0], dead = members[1];
  const WorkerId idle = 3 - inside - dead;
  const int64_t gang = worker(inside).gangs.front().first.gang;
  CAF_CHECK(control->gang_running(gang));
  kill(dead);
  run();
  CAF_CHECK(!control->gang_running(gang));
  // The survivor is still inside the attempt: out of the schedule, no task.
  CAF_CHECK(!control->book().has_worker(inside));
  CAF_CHECK(worker(inside).units.empty());
  CAF_CHECK_EQUAL(worker(inside).gangs.size(), 1u);
  // The idle worker takes a unit of the config, from its last committed state.
  CAF_REQUIRE_EQUAL(worker(idle).units.size(), 1u);
  CAF_CHECK_EQUAL(worker(idle).units.front().first.state, "init 0");
  // The survivor answers (its rank had finished): too late to count; it rejoins.
  finish_gangs(inside, true);
  run();
  CAF_CHECK(control->book().has_worker(inside));
  CAF_CHECK_EQUAL(store().gang_commits, 0);
  CAF_CHECK(store().commits.empty());
  drive_to_end();
  CAF_CHECK(heard().done->error.empty());
  CAF_CHECK_EQUAL(store().gang_commits, 0);
  check_each_unit_committed_once(2, 1, 1);
}

// A gang's result is being committed when a member's agent is lost: the
// member leaves the book only once the commit answers, so the gang's units
// commit once and none goes back to the queue.
CAF_TEST(a_gang_member_lost_while_the_gangs_result_commits_leaves_after_the_commit) {
  start(2, 1, 1, 2, Parallelism::data);
  store().hold = true;
  run();
  CAF_REQUIRE_EQUAL(busy(true).size(), 2u);
  for (auto w : busy(true)) finish_gangs(w);
  run();
  CAF_REQUIRE_EQUAL(store().held_gangs.size(), 1u);
  lose_agent_of(1);
  run();
  CAF_CHECK(control->book().has_worker(1));  // in the gang until the commit answers
  CAF_CHECK(busy().empty());
  CAF_CHECK(!heard().done);
  answer_commits();
  run();
  CAF_CHECK(!control->book().has_worker(1));
  CAF_REQUIRE(heard().done.has_value());
  CAF_CHECK(heard().done->error.empty());
  CAF_CHECK_EQUAL(store().gang_commits, 1);
  check_each_unit_committed_once(2, 1, 1);
}

// Every worker lost with units left and no commit to wait for: the
// experiment ends, saying why.
CAF_TEST(the_experiment_ends_when_every_worker_is_gone) {
  start(2, 1, 1, 1);
  run();
  lose_agent_of(0);
  run();
  CAF_REQUIRE(heard().done.has_value());
  CAF_CHECK_EQUAL(heard().done->error, "every worker is gone");
}

CAF_TEST_FIXTURE_SCOPE_END()
