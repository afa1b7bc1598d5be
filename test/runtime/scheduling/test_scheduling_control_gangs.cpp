// Data-parallel gangs in real runs, the plain-code half: ExperimentControl with a gang
// planner (dispatch_all, on_gang_committed, on_gang_failed, resume from gang
// entries), the rendezvous board, the [cluster] keys and summary.json's
// "training" per config. No actors, no LibTorch.
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <set>

#include "runtime/cluster/rendezvous_board.hpp"
#include "runtime/run/run_control.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/run_summary.hpp"
#include "test/runtime/scheduling/test_scheduling_util.hpp"
#include "test/support/contract_check.hpp"

using namespace cerebro;
using cerebro::test::entry_of;

namespace {

ExperimentControl make_control(int partitions, Parallelism mode, int retries = 3) {
  auto control = test::make_control(partitions, retries);
  ClusterSpec cluster;  // as a real run's: the allreduce is still to be measured
  cluster.max_gang = 8;
  control.set_parallelism(mode, gang_costs(cluster));
  return control;
}

std::vector<UnitLogEntry> gang_entries(const GangDispatch& g, int64_t first_seq = 1) {
  std::vector<UnitLogEntry> out;
  for (const auto& d : g.members) {
    UnitLogEntry e = entry_of(d);
    e.seq = first_seq + static_cast<int64_t>(out.size());
    e.gang = first_seq;
    e.gang_size = g.size();
    out.push_back(e);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(control_gangs)

BOOST_AUTO_TEST_CASE(data_forms_a_gang_of_the_two_holders_for_a_single_config) {
  auto control = make_control(2, Parallelism::data);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 2);
  int gangs = 0;
  while (!control.all_done()) {
    DispatchBatch batch = control.dispatch_all();
    BOOST_REQUIRE(batch.units.empty());
    BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
    const GangDispatch& g = batch.gangs[0];
    BOOST_REQUIRE_EQUAL(g.size(), 2);
    BOOST_TEST(g.members[0].worker != g.members[1].worker);
    BOOST_TEST(g.members[0].unit.partition != g.members[1].unit.partition);
    // The gang ends the epoch: every rank validates its share (rank 0 reports it).
    BOOST_TEST(g.members[0].validate);
    BOOST_TEST(g.members[1].validate);
    BOOST_TEST(g.members[0].seed == unit_seed(1, g.members[0].unit));
    BOOST_REQUIRE(control.gang_of(g.members[1].worker).has_value());
    BOOST_TEST(*control.gang_of(g.members[1].worker) == g.id);
    BOOST_TEST(control.dispatch_all().empty());  // both workers are in the gang
    std::string line = event_line(control.on_gang_committed(g.id, gang_entries(g), 20, 0.2));
    BOOST_TEST(line.find("epoch") != std::string::npos, line);
    BOOST_TEST(!control.gang_running(g.id));
    ++gangs;
  }
  BOOST_TEST(gangs == 2);
  BOOST_TEST(control.units_done() == 4);
  BOOST_TEST(control.outcomes().at(0).status == ConfigStatus::completed);
  // The planner learnt the allreduce per step and the steps per unit.
  BOOST_TEST(control.planner()->costs().steps_per_unit == 10.0);
  BOOST_TEST(control.planner()->costs().allreduce_s > 0);
}

BOOST_AUTO_TEST_CASE(mop_never_forms_a_gang) {
  auto control = make_control(2, Parallelism::mop);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 2);
  while (!control.all_done()) {
    DispatchBatch batch = control.dispatch_all();
    BOOST_REQUIRE(batch.gangs.empty());
    BOOST_REQUIRE_EQUAL(batch.units.size(), 1u);  // isolation: one unit of the config at a time
    control.on_committed(batch.units[0].worker, entry_of(batch.units[0]));
  }
  BOOST_TEST(control.units_done() == 4);
}

BOOST_AUTO_TEST_CASE(auto_forms_a_gang_once_unit_times_are_measured) {
  auto control = make_control(4, Parallelism::automatic);
  control.add_worker(0, {0, 1, 2, 3});
  control.add_worker(1, {0, 1, 2, 3});
  control.add_config(0, 2);
  // Nothing measured: the first unit runs alone.
  DispatchBatch first = control.dispatch_all();
  BOOST_REQUIRE(first.gangs.empty());
  BOOST_REQUIRE_EQUAL(first.units.size(), 1u);
  control.on_committed(first.units[0].worker, entry_of(first.units[0], 10.0));
  // Unit times known, the allreduce not yet: still alone.
  DispatchBatch unmeasured = control.dispatch_all();
  BOOST_REQUIRE(unmeasured.gangs.empty());
  BOOST_REQUIRE_EQUAL(unmeasured.units.size(), 1u);
  control.on_committed(unmeasured.units[0].worker, entry_of(unmeasured.units[0], 10.0));
  // Both measured, a single config on two idle holders: the gang halves its chain.
  control.observe_allreduce(2, 0.001);
  DispatchBatch second = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(second.gangs.size(), 1u);
  BOOST_TEST(second.units.empty());
  BOOST_REQUIRE(control.planner()->last_estimate());
  BOOST_TEST(control.planner()->last_estimate()->gang_wins);
}

BOOST_AUTO_TEST_CASE(a_failed_gang_requeues_all_its_units_and_commits_nothing) {
  auto control = make_control(2, Parallelism::data, 3);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  DispatchBatch batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
  const int64_t id = batch.gangs[0].id;
  std::string line = event_line(control.on_gang_failed(id, "peer timed out"));
  BOOST_TEST(line.find("failed") != std::string::npos, line);
  BOOST_TEST(control.units_done() == 0);
  BOOST_TEST(control.book().pending_partitions(0) == (std::vector<PartitionId>{0, 1}));
  BOOST_TEST(!control.book().worker_busy(0));
  BOOST_TEST(!control.book().worker_busy(1));
  BOOST_TEST(control.on_gang_failed(id, "again").empty());  // unknown now: no-op
  // The retry is a new attempt of both units.
  DispatchBatch retry = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(retry.gangs.size(), 1u);
  BOOST_TEST(retry.gangs[0].id != id);
  BOOST_TEST(retry.gangs[0].attempt == 1);
  CEREBRO_CHECK_CONTRACT(control.on_gang_committed(id, gang_entries(batch.gangs[0]), 1, 0), "is not running");
}

// The gang's line keeps the member whose failure ended its config, whichever
// rank it was, and says nothing of the ranks counted after it.
BOOST_AUTO_TEST_CASE(a_failed_gang_reports_the_config_it_gave_up_on) {
  auto control = make_control(2, Parallelism::data, 1);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  DispatchBatch batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
  const ControlEvents events = control.on_gang_failed(batch.gangs[0].id, "peer timed out");
  BOOST_REQUIRE(events.size() >= 2u);
  BOOST_TEST(static_cast<int>(events.front().kind) == static_cast<int>(ControlEvent::Kind::gang_failed));
  const ControlEvent* gave_up = find_event(events, ControlEvent::Kind::config_gave_up);
  BOOST_REQUIRE(gave_up != nullptr);
  BOOST_TEST(gave_up->config == 0);
  BOOST_TEST(find_event(events, ControlEvent::Kind::attempt_failed) == nullptr);
  const std::string line = event_line(events);
  BOOST_TEST(line.rfind(fmt::format("gang {} of config 0 (2 workers) failed, its units are pending again: config 0 "
                                    "failed after 1 attempts of config 0 / partition ",
                                    batch.gangs[0].id),
                        0) == 0u,
             line);
  BOOST_CHECK(control.outcomes().at(0).status == ConfigStatus::failed);
}

BOOST_AUTO_TEST_CASE(a_member_that_dies_fails_the_gang_and_the_survivor_goes_back_to_mop) {
  auto control = make_control(2, Parallelism::data);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  DispatchBatch batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
  std::string line = event_line(control.on_worker_died(1, "worker died: killed"));
  BOOST_TEST(line.find("gang") != std::string::npos, line);
  BOOST_TEST(!control.gang_running(batch.gangs[0].id));
  BOOST_TEST(control.units_done() == 0);
  // One worker left: its units run alone.
  DispatchBatch after = control.dispatch_all();
  BOOST_TEST(after.gangs.empty());
  BOOST_REQUIRE_EQUAL(after.units.size(), 1u);
  BOOST_TEST(after.units[0].worker == 0);
}

BOOST_AUTO_TEST_CASE(a_lost_node_in_a_gang_requeues_the_gang) {
  auto control = make_control(2, Parallelism::data);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  DispatchBatch batch = control.dispatch_all();
  BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
  control.remove_worker(0);
  BOOST_TEST(!control.gang_running(batch.gangs[0].id));
  BOOST_TEST(!control.book().worker_busy(1));
  BOOST_TEST(control.book().pending_partitions(0).size() == 2u);
}

BOOST_AUTO_TEST_CASE(dispatch_for_mop_shells_refuses_to_drop_a_gang) {
  auto control = make_control(2, Parallelism::data);
  control.add_worker(0, {0, 1});
  control.add_worker(1, {0, 1});
  control.add_config(0, 1);
  CEREBRO_CHECK_CONTRACT(control.dispatch(), "a shell running them calls dispatch_all()");
}

BOOST_AUTO_TEST_CASE(resume_replays_gang_entries_as_gangs) {
  // The log of a run: epoch 0 as a gang of 2 (seq 1, 2), epoch 1's first
  // unit alone (seq 3).
  std::vector<UnitLogEntry> log;
  for (PartitionId p : {1, 0}) {
    UnitLogEntry e;
    e.seq = static_cast<int64_t>(log.size()) + 1;
    e.config = 0;
    e.partition = p;
    e.epoch = 0;
    e.examples = 10;
    e.gang = 1;
    e.gang_size = 2;
    e.has_validation = p == 1;
    e.val_accuracy = 0.6;
    log.push_back(e);
  }
  UnitLogEntry alone;
  alone.seq = 3;
  alone.config = 0;
  alone.partition = 0;
  alone.epoch = 1;
  alone.examples = 10;
  log.push_back(alone);

  auto control = make_control(2, Parallelism::data);
  control.add_config(0, 2);
  auto restored = control.restore(log).value();
  BOOST_TEST(restored.units == 3);
  BOOST_REQUIRE_EQUAL(restored.decisions.size(), 1u);  // epoch 0 ended with the gang
  BOOST_TEST(control.units_done() == 3);
  BOOST_TEST(control.book().epoch(0) == 1);
  BOOST_TEST(control.book().pending_partitions(0) == (std::vector<PartitionId>{1}));
  BOOST_TEST(control.best()->second == 0.6);

  // A gang entry twice contradicts MOP: a clear error.
  auto twice = make_control(2, Parallelism::data);
  twice.add_config(0, 2);
  std::vector<UnitLogEntry> bad = {log[0], log[0]};
  bad[1].seq = 2;
  auto refused = twice.restore(bad);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST((refused.code() == StatusCode::invalid_argument));
}

// A replay forms the original's gangs again, ranks as recorded (here
// partition 1 was rank 0), even under mop; a worker whose unit belongs to a
// recorded gang waits for the gang's other holder rather than run it alone;
// units of no recorded gang run alone.
BOOST_AUTO_TEST_CASE(a_replay_forms_the_recorded_gangs_ranks_as_recorded) {
  auto control = test::make_control(2);  // mop: no planner
  control.set_recorded_gangs({{Unit{0, 1, 0}, Unit{0, 0, 0}}});
  control.add_config(0, 2);
  control.add_worker(0, {0});
  BOOST_TEST(control.dispatch_all().empty());  // (0, 0, 0) waits for partition 1's holder
  control.add_worker(1, {1});
  DispatchBatch batch = control.dispatch_all();
  BOOST_REQUIRE(batch.units.empty());
  BOOST_REQUIRE_EQUAL(batch.gangs.size(), 1u);
  const GangDispatch& g = batch.gangs[0];
  BOOST_REQUIRE_EQUAL(g.size(), 2);
  BOOST_TEST(g.members[0].worker == 1);
  BOOST_TEST(g.members[0].unit == (Unit{0, 1, 0}));
  BOOST_TEST(g.members[1].worker == 0);
  BOOST_TEST(g.members[1].unit == (Unit{0, 0, 0}));
  BOOST_TEST(g.members[0].seed == unit_seed(1, Unit{0, 1, 0}));
  control.on_gang_committed(g.id, gang_entries(g), 20, 0.2);
  int alone = 0;
  while (!control.all_done()) {
    DispatchBatch next = control.dispatch_all();
    BOOST_REQUIRE(next.gangs.empty());  // epoch 1 was not a gang
    BOOST_REQUIRE_EQUAL(next.units.size(), 1u);
    control.on_committed(next.units[0].worker, entry_of(next.units[0]));
    ++alone;
  }
  BOOST_TEST(alone == 2);
  BOOST_TEST((control.set_recorded_gangs({{Unit{0, 0, 0}}}).code() == StatusCode::invalid_argument));
  BOOST_TEST((control.set_recorded_gangs({{Unit{0, 0, 0}, Unit{0, 1, 1}}}).code() == StatusCode::invalid_argument));
}

BOOST_AUTO_TEST_CASE(rendezvous_board_keeps_each_gang_in_its_scope) {
  RendezvousBoard board;
  rendezvous_request set;
  set.gang = 1;
  set.op = RendezvousOp::set;
  set.keys = {"rank0"};
  set.value = {1, 2, 3};
  BOOST_TEST(board.handle(set).found);
  rendezvous_request get = set;
  get.op = RendezvousOp::get;
  get.value.clear();
  BOOST_TEST(board.handle(get).found);
  BOOST_TEST(board.handle(get).value == (std::vector<uint8_t>{1, 2, 3}));
  rendezvous_request other = get;
  other.gang = 2;
  BOOST_TEST(!board.handle(other).found);  // another gang never sees it
  rendezvous_request add;
  add.gang = 1;
  add.op = RendezvousOp::add;
  add.keys = {"count"};
  add.number = 2;
  BOOST_TEST(board.handle(add).number == 2);
  add.number = 3;
  BOOST_TEST(board.handle(add).number == 5);
  rendezvous_request check;
  check.gang = 1;
  check.op = RendezvousOp::check;
  check.keys = {"rank0", "count"};
  BOOST_TEST(board.handle(check).found);
  check.keys.push_back("rank1");
  BOOST_TEST(!board.handle(check).found);
  rendezvous_request keys;
  keys.gang = 1;
  keys.op = RendezvousOp::num_keys;
  BOOST_TEST(board.handle(keys).number == 2);
  rendezvous_request remove = get;
  remove.op = RendezvousOp::remove;
  BOOST_TEST(board.handle(remove).found);
  BOOST_TEST(!board.handle(get).found);
  board.close(1);
  board.close(2);
  BOOST_TEST(board.open_scopes() == 0u);
}

BOOST_AUTO_TEST_CASE(cluster_parallelism_and_max_gang_keys) {
  const std::string data = "[data]\nsource = \"idx\"\npath = \"/d\"\n";
  const std::string space = "[space]\nmodel = [\"mlp\"]\n";
  auto plain = parse_spec_string(data + space, "/specs", "s.toml");
  BOOST_REQUIRE_MESSAGE(plain.ok(), plain.error());
  BOOST_TEST(plain->cluster.parallelism == Parallelism::automatic);  // the default
  BOOST_TEST(plain->cluster.max_gang == 0);
  auto data_mode =
      parse_spec_string(data + "[cluster]\nparallelism = \"data\"\nmax_gang = 2\n" + space, "/specs", "s.toml");
  BOOST_REQUIRE_MESSAGE(data_mode.ok(), data_mode.error());
  BOOST_TEST(data_mode->cluster.parallelism == Parallelism::data);
  BOOST_TEST(data_mode->cluster.max_gang == 2);

  auto bad = parse_spec_string(data + "[cluster]\nparallelism = \"model\"\n" + space, "/specs", "s.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().is_invalid_argument());
  BOOST_TEST(bad.error().find("[cluster] parallelism") != std::string::npos, bad.error());
  BOOST_TEST(bad.error().find("\"auto\"") != std::string::npos, bad.error());
  BOOST_TEST(bad.error().find("\"data\"") != std::string::npos, bad.error());
  auto one = parse_spec_string(data + "[cluster]\nmax_gang = 1\n" + space, "/specs", "s.toml");
  BOOST_REQUIRE(!one.ok());
  BOOST_TEST(one.error().find("[cluster] max_gang") != std::string::npos, one.error());

  // A gang larger than the workers holding partitions: a clear error.
  ClusterSpec cluster;
  cluster.max_gang = 3;
  Status too_big = check_gang_size(cluster, 2);
  BOOST_TEST(too_big.is_invalid_argument());
  BOOST_TEST(too_big.message().find("max_gang = 3") != std::string::npos, too_big.message());
  BOOST_TEST(too_big.message().find("2 worker") != std::string::npos, too_big.message());
  BOOST_TEST(check_gang_size(cluster, 3).ok());
  cluster.max_gang = 0;
  BOOST_TEST(check_gang_size(cluster, 1).ok());
  BOOST_TEST(gang_costs(cluster).max_gang >= 2);
}

BOOST_AUTO_TEST_CASE(summary_says_how_each_config_trained) {
  std::vector<UnitLogEntry> log(5);
  for (size_t i = 0; i < log.size(); ++i) log[i].config = 0;
  log[0].gang = 1, log[0].gang_size = 2;
  log[1].gang = 1, log[1].gang_size = 2;
  log[2].gang = 3, log[2].gang_size = 2;
  log[3].gang = 3, log[3].gang_size = 2;
  log[4].config = 1;
  auto zero = how_trained(log, 0);
  BOOST_TEST(zero["units_alone"].get<int64_t>() == 0);
  BOOST_TEST(zero["gang_units"].get<int64_t>() == 4);
  BOOST_TEST(zero["gangs"]["2"].get<int64_t>() == 2);
  auto one = how_trained(log, 1);
  BOOST_TEST(one["units_alone"].get<int64_t>() == 1);
  BOOST_TEST(one["gangs"].empty());
}

BOOST_AUTO_TEST_SUITE_END()
