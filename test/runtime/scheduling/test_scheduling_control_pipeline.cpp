// Pipeline configs in the control (plain code): a unit of a config
// that trains over k stages takes a crew of k idle workers for one attempt,
// its hosts leave the book until it ends, it commits once or is pending
// again, and a config waiting for its crew does not block the others.
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

#include <fmt/format.h>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/unit_log_check.hpp"
#include "runtime/store/run_summary.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;
using cerebro::test::entry_of;
using cerebro::test::make_control;

namespace {

// A procedure that proposes the given configs at once (as tpe does while
// the run trains), each for one epoch, then decides as FixedEpochs does.
class ProposesConfigs : public FixedEpochsProcedure {
 public:
  explicit ProposesConfigs(std::vector<ConfigId> ids) : ids_(std::move(ids)) {}
  std::string name() const override { return "proposes"; }
  std::vector<ConfigProposal> take_proposals() override {
    std::vector<ConfigProposal> out;
    for (ConfigId c : ids_) out.push_back(ConfigProposal{c, {{"lr", 0.1}}, 1, "test"});
    ids_.clear();
    return out;
  }

 private:
  std::vector<ConfigId> ids_;
};

ExperimentControl proposing_control(int partitions, std::vector<ConfigId> ids) {
  return ExperimentControl(partitions, 1, ExperimentControl::Metric::val_accuracy, 3,
                           make_policy(SchedulerKind::randomized, 1),
                           std::make_unique<ProposesConfigs>(std::move(ids)));
}

// Runs every attempt to its commit; returns how many units trained as
// pipeline attempts and how many alone.
std::pair<int, int> run_all(ExperimentControl& control) {
  int pipelined = 0, alone = 0;
  for (int rounds = 0; !control.all_done(); ++rounds) {
    BOOST_REQUIRE(rounds < 100);
    auto batch = control.dispatch_all();
    BOOST_REQUIRE(!batch.empty());
    for (const auto& p : batch.pipelines) {
      control.on_pipeline_committed(p.id, entry_of(p.driver));
      ++pipelined;
    }
    for (const auto& d : batch.units) {
      control.on_committed(d.worker, entry_of(d));
      ++alone;
    }
  }
  return {pipelined, alone};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(control_pipeline)

BOOST_AUTO_TEST_CASE(a_pipeline_unit_takes_a_crew_and_its_host_leaves_the_book_until_it_commits) {
  auto control = make_control(2);
  control.add_worker(0, {0});
  control.add_worker(1, {1});
  control.add_config(7, 1);
  control.set_pipeline_stages(7, 2);
  BOOST_CHECK_EQUAL(control.pipeline_stages(7), 2);
  auto batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.pipelines.size(), 1u);
  BOOST_CHECK(batch.units.empty());
  const PipelineDispatch p = batch.pipelines.front();
  BOOST_CHECK_EQUAL(p.stages(), 2);
  BOOST_REQUIRE_EQUAL(p.hosts.size(), 1u);
  // The driver holds the unit's partition; the host is the other worker.
  BOOST_CHECK(control.book().holds(p.driver.worker, p.driver.unit.partition));
  BOOST_CHECK_NE(p.hosts[0], p.driver.worker);
  BOOST_CHECK(!p.driver.validate);  // one of two partitions
  BOOST_CHECK_EQUAL(p.label, fmt::format("pipeline over 2 stages (workers {}, {})", p.driver.worker, p.hosts[0]));
  BOOST_CHECK(!control.book().has_worker(p.hosts[0]));
  BOOST_CHECK(control.pipeline_of(p.hosts[0]) == p.id);
  BOOST_CHECK(control.pipeline_of(p.driver.worker) == p.id);
  // Nothing else can start: the config is busy and the host is out of the book.
  BOOST_CHECK(control.dispatch_all().empty());
  control.on_pipeline_committed(p.id, entry_of(p.driver));
  BOOST_CHECK(control.book().has_worker(p.hosts[0]));
  BOOST_CHECK_EQUAL(control.units_done(), 1);
  BOOST_CHECK(!control.pipeline_running(p.id));
  // The second unit validates (ends the epoch), the config finishes.
  batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.pipelines.size(), 1u);
  BOOST_CHECK(batch.pipelines.front().driver.validate);
  control.on_pipeline_committed(batch.pipelines.front().id, entry_of(batch.pipelines.front().driver));
  BOOST_CHECK(control.all_done());
  CEREBRO_CHECK_CONTRACT(control.on_pipeline_committed(p.id, entry_of(p.driver)), "is not running");
}

BOOST_AUTO_TEST_CASE(set_pipeline_stages_refuses_fewer_than_two_and_unknown_configs) {
  auto control = make_control(1);
  control.add_config(1, 1);
  CEREBRO_CHECK_CONTRACT(control.set_pipeline_stages(1, 1), "needs at least 2 stages, got 1");
  BOOST_TEST((control.set_pipeline_stages(99, 2).code() == StatusCode::not_found));
  BOOST_CHECK_EQUAL(control.pipeline_stages(1), 1);
}

BOOST_AUTO_TEST_CASE(a_failed_attempt_requeues_the_unit_and_hands_the_host_back) {
  auto control = make_control(1, 2);
  control.add_worker(0, {0});
  control.add_worker(1, {0});
  control.add_config(3, 1);
  control.set_pipeline_stages(3, 2);
  auto p = control.dispatch_all().pipelines.at(0);
  std::string line = event_line(control.on_pipeline_failed(p.id, "stage 1: injected"));
  BOOST_CHECK_NE(line.find("failed (attempt 1 of 2)"), std::string::npos);
  BOOST_CHECK(control.book().has_worker(p.hosts[0]));
  BOOST_CHECK(!control.book().worker_busy(p.driver.worker));
  BOOST_TEST(control.on_pipeline_failed(p.id, "again").empty());  // ended already: no-op
  // Pending again: the next attempt runs it, with attempt 1.
  auto again = control.dispatch_all().pipelines.at(0);
  BOOST_CHECK(again.driver.unit == p.driver.unit);
  BOOST_CHECK_EQUAL(again.driver.attempt, 1);
  control.on_pipeline_committed(again.id, entry_of(again.driver));
  BOOST_CHECK(control.all_done());
  BOOST_CHECK(control.outcomes().at(3).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(a_lost_driver_ends_the_attempt_and_a_lost_host_does_not_rejoin) {
  auto control = make_control(1);
  for (WorkerId w : {0, 1, 2}) control.add_worker(w, {0});
  control.add_config(3, 1);
  control.set_pipeline_stages(3, 2);
  auto p = control.dispatch_all().pipelines.at(0);
  const WorkerId host = p.hosts[0];
  control.remove_worker(p.driver.worker);  // node lost: the unit is pending again, not counted
  BOOST_CHECK(!control.pipeline_running(p.id));
  BOOST_CHECK(control.book().has_worker(host));
  auto q = control.dispatch_all().pipelines.at(0);
  BOOST_CHECK_EQUAL(q.driver.attempt, 0);
  const WorkerId host2 = q.hosts[0];
  control.on_worker_died(host2, "stage host died");  // the driver's unit will fail
  BOOST_CHECK(control.pipeline_running(q.id));
  control.add_worker(q.driver.worker, {0});  // new holdings of a running driver: still running
  control.on_pipeline_failed(q.id, "stage 1 is gone");
  BOOST_CHECK(!control.book().has_worker(host2));
  BOOST_CHECK(control.book().has_worker(q.driver.worker));
}

BOOST_AUTO_TEST_CASE(holdings_of_a_host_arrive_while_it_hosts_and_apply_when_it_rejoins) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {});
  control.add_config(3, 1);
  control.set_pipeline_stages(3, 2);
  auto p = control.dispatch_all().pipelines.at(0);
  BOOST_REQUIRE_EQUAL(p.driver.worker, 0);
  BOOST_REQUIRE_EQUAL(p.hosts[0], 1);
  control.add_worker(1, {1});
  BOOST_CHECK(!control.book().has_worker(1));
  control.on_pipeline_committed(p.id, entry_of(p.driver));
  BOOST_CHECK(control.book().holds(1, 1));
}

// Two workers, two partitions, two epochs: a pipeline config next to an
// ordinary one. The ordinary config keeps training while the pipeline config
// waits for both workers to be idle; every unit commits exactly once.
BOOST_AUTO_TEST_CASE(a_pipeline_config_and_an_ordinary_one_both_train_to_the_end) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(1, 2);
  control.add_config(2, 2);
  control.set_pipeline_stages(2, 2);
  std::vector<Dispatch> running;
  std::vector<PipelineDispatch> attempts;
  std::map<Unit, int> committed;
  int rounds = 0;
  while (!control.all_done()) {
    BOOST_REQUIRE(++rounds < 100);
    auto batch = control.dispatch_all();
    running.insert(running.end(), batch.units.begin(), batch.units.end());
    attempts.insert(attempts.end(), batch.pipelines.begin(), batch.pipelines.end());
    BOOST_REQUIRE(!running.empty() || !attempts.empty());
    // Finish the oldest thing in flight.
    if (!running.empty()) {
      Dispatch d = running.front();
      running.erase(running.begin());
      BOOST_CHECK_EQUAL(d.unit.config, 1);
      control.on_committed(d.worker, entry_of(d));
      ++committed[d.unit];
    } else {
      PipelineDispatch p = attempts.front();
      attempts.erase(attempts.begin());
      BOOST_CHECK_EQUAL(p.driver.unit.config, 2);
      control.on_pipeline_committed(p.id, entry_of(p.driver));
      ++committed[p.driver.unit];
    }
  }
  BOOST_CHECK_EQUAL(committed.size(), 8u);
  for (const auto& [unit, times] : committed) BOOST_CHECK_EQUAL(times, 1);
  BOOST_CHECK(control.outcomes().at(1).status == ConfigStatus::completed);
  BOOST_CHECK(control.outcomes().at(2).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(dispatch_refuses_a_shell_that_cannot_run_pipelines) {
  auto control = make_control(1);
  control.add_worker(0, {0});
  control.add_worker(1, {0});
  control.add_config(3, 1);
  control.set_pipeline_stages(3, 2);
  CEREBRO_CHECK_CONTRACT(control.dispatch(), "a shell running them calls dispatch_all()");
}

// A config the search proposes while the run trains gets its
// stages before it joins the schedule, and every unit of it is a pipeline
// attempt (before, such a config was refused or trained whole).
BOOST_AUTO_TEST_CASE(a_config_proposed_mid_run_trains_as_a_pipeline_from_its_first_unit) {
  auto control = proposing_control(2, {4, 5});
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  auto proposed = control.take_proposals();
  BOOST_REQUIRE_EQUAL(proposed.size(), 2u);
  // Known while its creation is pending: the stages may be set first...
  control.set_pipeline_stages(4, 2);
  control.on_config_created(4);
  // ... or passed with the creation.
  control.on_config_created(5, 2);
  BOOST_CHECK_EQUAL(control.pipeline_stages(4), 2);
  BOOST_CHECK_EQUAL(control.pipeline_stages(5), 2);
  auto [pipelined, alone] = run_all(control);
  BOOST_CHECK_EQUAL(pipelined, 4);
  BOOST_CHECK_EQUAL(alone, 0);
  BOOST_CHECK(control.outcomes().at(4).status == ConfigStatus::completed);
  BOOST_CHECK(control.outcomes().at(5).status == ConfigStatus::completed);
}

// A config a person adds (or clones) mid-run with its stages trains as a
// pipeline, and its action records the split.
BOOST_AUTO_TEST_CASE(a_config_added_by_the_user_with_stages_trains_as_a_pipeline) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  BOOST_TEST((control.set_pipeline_stages(6, 2).code() == StatusCode::not_found));  // unknown until added
  BOOST_TEST(!control.add_config_by_user(6, 1, {{"lr", 0.1}}, -1, 0).ok(), "stages below 1 are refused");
  BOOST_TEST(control.add_config_by_user(6, 1, {{"lr", 0.1}}, -1, 2).ok());
  BOOST_CHECK_EQUAL(control.pipeline_stages(6), 2);
  BOOST_TEST(control.add_config_by_user(7, 1, {{"lr", 0.1}}, 6, 2).ok());  // a clone keeps the split
  BOOST_TEST(control.add_config_by_user(8, 1, {{"lr", 0.1}}).ok());
  BOOST_CHECK_EQUAL(control.pipeline_stages(8), 1);
  auto actions = control.take_user_actions();
  BOOST_REQUIRE_EQUAL(actions.size(), 3u);
  BOOST_TEST(actions[0]["pipeline_stages"] == 2);
  BOOST_TEST(actions[1]["cloned_from"] == 6);
  BOOST_TEST(!actions[2].contains("pipeline_stages"));
  auto [pipelined, alone] = run_all(control);
  BOOST_CHECK_EQUAL(pipelined, 4);  // configs 6 and 7, 2 partitions each
  BOOST_CHECK_EQUAL(alone, 4);      // configs 0 and 8
}

// Resuming a search that proposes: a recorded config that has not rejoined
// yet takes its stages, and keeps them when it is re-proposed.
BOOST_AUTO_TEST_CASE(a_recorded_config_takes_its_stages_before_it_is_proposed_again) {
  auto control = proposing_control(1, {});
  control.set_recorded_configs({ConfigRecord{3, {{"lr", 0.1}}, ConfigStatus::running, ""}});
  control.set_pipeline_stages(3, 2);
  BOOST_TEST((control.set_pipeline_stages(4, 2).code() == StatusCode::not_found));
}

BOOST_AUTO_TEST_SUITE_END()

// A pipeline crew larger than the cluster. The plain rule first,
// then the control: a wait is said once (workers may join), a cluster no
// worker can join fails the config with the reason, and a crew that can
// form again clears the wait.
BOOST_AUTO_TEST_SUITE(pipeline_crew_shortage)

BOOST_AUTO_TEST_CASE(the_outlook_of_a_crew) {
  BOOST_CHECK(crew_outlook(2, 2, 0) == CrewOutlook::can_form);
  BOOST_CHECK(crew_outlook(3, 2, 0) == CrewOutlook::waits_for_workers);
  BOOST_CHECK(crew_outlook(3, 2, 2) == CrewOutlook::cannot_form);
  // A fixed cluster whose worker is being respawned: it waits.
  BOOST_CHECK(crew_outlook(2, 1, 2) == CrewOutlook::waits_for_workers);
  BOOST_CHECK(crew_outlook(2, 3, 3) == CrewOutlook::can_form);
  BOOST_TEST(crew_wait_message(4, 3, 2) ==
             "config 4 waits for 3 idle workers for its pipeline stages; the cluster has 2");
  BOOST_TEST(crew_shortage_error(3, 1) ==
             "it trains as a pipeline over 3 stages, but the cluster has 1 worker and no "
             "more can join");
}

BOOST_AUTO_TEST_CASE(a_crew_larger_than_the_cluster_waits_said_once_until_workers_join) {
  auto control = make_control(1);
  control.add_worker(0, {0});
  control.add_config(2, 1);
  control.set_pipeline_stages(2, 3);
  auto batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.notices.size(), 1u);
  BOOST_TEST(event_line(batch.notices[0]) ==
             "config 2 waits for 3 idle workers for its pipeline stages; the cluster has 1");
  BOOST_TEST(batch.empty());
  BOOST_TEST(control.dispatch_all().notices.empty(), "said once");
  BOOST_TEST(control.outcomes().at(2).status == ConfigStatus::running);
  control.add_worker(1, {0});
  control.add_worker(2, {0});
  batch = control.dispatch_all();
  BOOST_TEST(batch.notices.empty());
  BOOST_REQUIRE_EQUAL(batch.pipelines.size(), 1u);
  BOOST_CHECK_EQUAL(batch.pipelines[0].stages(), 3);
  control.on_pipeline_committed(batch.pipelines[0].id, entry_of(batch.pipelines[0].driver));
  BOOST_CHECK(control.all_done());
}

BOOST_AUTO_TEST_CASE(a_shortage_after_workers_leave_is_said_again) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(1, 1);
  control.set_pipeline_stages(1, 2);
  auto first = control.dispatch_all();
  BOOST_TEST(first.notices.empty());
  BOOST_REQUIRE_EQUAL(first.pipelines.size(), 1u);
  // A host hosting a stage counts as a worker the cluster has.
  BOOST_TEST(control.dispatch_all().notices.empty());
  control.on_pipeline_committed(first.pipelines[0].id, entry_of(first.pipelines[0].driver));
  control.remove_worker(1);  // its agent is lost
  auto batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.notices.size(), 1u);
  BOOST_TEST(event_line(batch.notices[0]).find("the cluster has 1") != std::string::npos, event_line(batch.notices[0]));
  control.add_worker(3, {0, 1});  // it rejoins
  batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.pipelines.size(), 1u);
  control.on_pipeline_committed(batch.pipelines[0].id, entry_of(batch.pipelines[0].driver));
  BOOST_CHECK(control.all_done());
  BOOST_CHECK(control.outcomes().at(1).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(on_a_fixed_cluster_a_crew_larger_than_it_fails_the_config_and_the_rest_trains) {
  auto control = make_control(2);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.set_fixed_workers(2);
  CEREBRO_CHECK_CONTRACT(control.set_fixed_workers(0), "at least 1 worker, got 0");
  control.add_config(1, 1);
  control.add_config(2, 1);
  control.set_pipeline_stages(2, 3);  // e.g. planned on 3 workers, resumed on 2
  auto batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.notices.size(), 1u);
  const std::string notice = event_line(batch.notices[0]);
  BOOST_TEST(notice.rfind("config 2 failed: it trains as a pipeline over 3 stages, but the cluster has 2 "
                          "workers and no more can join",
                          0) == 0,
             notice);
  BOOST_TEST((batch.notices[0].front().kind == ControlEvent::Kind::config_failed));
  BOOST_CHECK(control.outcomes().at(2).status == ConfigStatus::failed);
  BOOST_TEST(control.outcomes().at(2).error.find("over 3 stages") != std::string::npos);
  // The other config still trains to the end.
  for (const auto& d : batch.units) control.on_committed(d.worker, entry_of(d));
  auto [pipelined, alone] = run_all(control);
  BOOST_CHECK_EQUAL(pipelined, 0);
  BOOST_CHECK_EQUAL(alone + static_cast<int>(batch.units.size()), 2);
  BOOST_CHECK(control.outcomes().at(1).status == ConfigStatus::completed);
}

BOOST_AUTO_TEST_CASE(on_a_fixed_cluster_a_worker_being_respawned_only_delays_the_crew) {
  auto control = make_control(1);
  control.add_worker(0, {0});
  control.add_worker(1, {0});
  control.set_fixed_workers(2);
  control.add_config(1, 1);
  control.set_pipeline_stages(1, 2);
  control.on_worker_died(1, "killed");
  auto batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.notices.size(), 1u);
  BOOST_TEST(event_line(batch.notices[0]).find("waits for 2 idle workers") != std::string::npos,
             event_line(batch.notices[0]));
  BOOST_CHECK(control.outcomes().at(1).status == ConfigStatus::running);
  control.add_worker(2, {0});  // respawned
  batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.pipelines.size(), 1u);
  control.on_pipeline_committed(batch.pipelines[0].id, entry_of(batch.pipelines[0].driver));
  BOOST_CHECK(control.all_done());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(unit_log_pipeline)

// A pipeline unit occupies its hosts: another unit on a host meanwhile
// breaks "one unit per worker"; a crew with a worker twice is malformed.
BOOST_AUTO_TEST_CASE(the_unit_log_check_counts_a_pipeline_unit_once_and_on_its_hosts) {
  ExpectedRun expected;
  expected.num_partitions = 2;
  expected.epochs_completed = {{1, 1}, {2, 1}};
  UnitRecord p0{1, 0, 0, 0, 0, 1, true};
  p0.pipeline_hosts = {1};
  UnitRecord p1{1, 1, 0, 1, 1, 2, true};
  p1.pipeline_hosts = {0};
  UnitRecord a{2, 0, 0, 0, 2, 3, true}, b{2, 1, 0, 1, 3, 4, true};
  BOOST_TEST(check_mop_invariants({p0, p1, a, b}, expected).ok());
  // Config 2's unit on worker 1 while worker 1 hosts stage 1 of config 1.
  UnitRecord clash{2, 1, 0, 1, 0.5, 0.9, true};
  auto bad = check_mop_invariants({p0, p1, a, clash}, expected);
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.message().find("one unit per worker") != std::string::npos, bad.message());
  // The same pipeline unit twice is a duplicate like any other.
  auto twice = check_mop_invariants({p0, p0, p1, a, b}, expected);
  BOOST_TEST(!twice.ok());
  UnitRecord self_hosted = p0;
  self_hosted.pipeline_hosts = {0};
  auto crew = check_mop_invariants({self_hosted, p1, a, b}, expected);
  BOOST_TEST(!crew.ok());
  BOOST_TEST(crew.message().find("bad pipeline crew") != std::string::npos, crew.message());
}

BOOST_AUTO_TEST_CASE(a_pipeline_entry_says_how_it_trained_in_the_log_and_the_summary) {
  UnitLogEntry e;
  e.config = 4;
  e.worker = 3;
  e.pipeline_workers = {3, 1};
  PipelineCrew crew;
  crew.driver = 3;
  crew.hosts = {1};
  BOOST_TEST(trained_as(e) == pipeline_label(crew));
  BOOST_TEST(trained_as(e) == "pipeline over 2 stages (workers 3, 1)");
  auto j = to_json(e);
  BOOST_TEST(j["trained_as"] == "pipeline over 2 stages (workers 3, 1)");
  BOOST_TEST(unit_log_entry_from_json(j).value().pipeline_workers == e.pipeline_workers);
  // Entries of other units keep their old keys only.
  UnitLogEntry alone;
  BOOST_TEST(!to_json(alone).contains("pipeline_workers"));
  BOOST_TEST(trained_as(alone) == "alone");
  auto how = how_trained({e, alone}, 4);
  BOOST_TEST(how["pipeline_units"] == 1);
  BOOST_TEST(how["pipeline"] == "pipeline over 2 stages");
  BOOST_TEST(!how_trained({alone}, 0).contains("pipeline"));
}

BOOST_AUTO_TEST_SUITE_END()
