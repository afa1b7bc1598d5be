// LiveCluster: the run follower's decisions as agents join, are lost and
// respawn workers (runtime/cluster/live_cluster.hpp). No actors.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "runtime/cluster/live_cluster.hpp"

using namespace cerebro;

namespace {

using Partitions = std::vector<PartitionId>;
using Workers = std::vector<WorkerId>;

// The start on `agents` agents (named a, b, c, ...) with `workers` workers each.
LiveCluster started(int partitions, int replication, int agents, int workers) {
  LiveCluster cluster(partitions, replication);
  auto holds = cluster.initial_placement(static_cast<size_t>(agents));
  for (int a = 0; a < agents; ++a)
    cluster.add_agent(std::string(1, static_cast<char>('a' + a)), holds[static_cast<size_t>(a)], workers);
  return cluster;
}

// Runs a repair to its end; `fails` names the agents whose placements fail.
std::vector<LiveCluster::Replacement> repair(LiveCluster& cluster, const std::vector<std::string>& fails = {}) {
  std::vector<LiveCluster::Replacement> out;
  while (auto attempt = cluster.next_repair()) {
    for (auto& r : cluster.take_repaired()) out.push_back(r);
    bool fail = std::find(fails.begin(), fails.end(), attempt->agent) != fails.end();
    cluster.repair_tried(*attempt, fail ? Status::io_error("disk full on " + attempt->agent) : Status());
  }
  for (auto& r : cluster.take_repaired()) out.push_back(r);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(live_cluster)

BOOST_AUTO_TEST_CASE(replication_is_the_specs_or_two_where_there_are_two_agents) {
  BOOST_TEST(LiveCluster::replication_for(3, 5) == 3);
  BOOST_TEST(LiveCluster::replication_for(0, 5) == 2);
  BOOST_TEST(LiveCluster::replication_for(0, 1) == 1);
}

BOOST_AUTO_TEST_CASE(the_agents_of_the_start_get_their_partitions_and_worker_ids_in_order) {
  LiveCluster cluster(3, 2);
  auto holds = cluster.initial_placement(2);
  BOOST_TEST((holds[0] == Partitions{0, 1, 2}));
  BOOST_TEST((cluster.add_agent("a", holds[0], 2) == Workers{0, 1}));
  BOOST_TEST((cluster.add_agent("b", holds[1], 1) == Workers{2}));
  BOOST_TEST(cluster.worker_count() == 3);
  BOOST_TEST(cluster.agent_of(1) == "a");
  BOOST_TEST(cluster.agent_of(2) == "b");
  BOOST_TEST(cluster.agent_of(7) == "?");
  BOOST_TEST((cluster.held_by("b") == holds[1]));
  BOOST_TEST((cluster.live_agents() == std::vector<std::string>{"a", "b"}));
}

BOOST_AUTO_TEST_CASE(a_lost_agents_workers_leave_and_a_partition_it_held_alone_is_an_orphan) {
  // 3 partitions, 1 copy each on 3 agents: a holds 0, b 1, c 2.
  auto cluster = started(3, 1, 3, 1);
  auto loss = cluster.lose("b");
  BOOST_REQUIRE(loss.has_value());
  BOOST_TEST((loss->workers == Workers{1}));
  BOOST_TEST((loss->orphans == Partitions{1}));
  BOOST_TEST(!cluster.live("b"));
  BOOST_TEST(cluster.agent_of(1) == "?");
  BOOST_TEST(cluster.worker_count() == 2);
  BOOST_TEST(!cluster.lose("b").has_value());  // told twice: once is enough
}

BOOST_AUTO_TEST_CASE(a_partition_with_a_live_replica_left_is_no_orphan) {
  auto cluster = started(2, 2, 2, 1);
  auto loss = cluster.lose("a");
  BOOST_REQUIRE(loss.has_value());
  BOOST_TEST(loss->orphans.empty());
  BOOST_TEST(!cluster.next_repair().has_value());
  BOOST_TEST(cluster.take_repaired().empty());
}

BOOST_AUTO_TEST_CASE(an_orphan_goes_to_the_live_agent_holding_the_fewest_partitions) {
  // 4 partitions, 1 copy, 3 agents: a holds {0, 3}, b {1}, c {2}.
  auto cluster = started(4, 1, 3, 1);
  cluster.lose("a");
  auto outcomes = repair(cluster);
  BOOST_REQUIRE_EQUAL(outcomes.size(), 2u);
  // 0 to b (the first of the emptiest on a tie), then 3 to c (b holds two by then).
  BOOST_TEST(outcomes[0].partition == 0);
  BOOST_TEST(outcomes[0].agent == "b");
  BOOST_TEST(outcomes[0].error.empty());
  BOOST_TEST(outcomes[1].partition == 3);
  BOOST_TEST(outcomes[1].agent == "c");
  BOOST_TEST((cluster.held_by("b") == Partitions{0, 1}));
  BOOST_TEST((cluster.held_by("c") == Partitions{2, 3}));
}

BOOST_AUTO_TEST_CASE(a_failed_placement_of_an_orphan_tries_the_next_emptiest_agent) {
  auto cluster = started(3, 1, 3, 1);
  cluster.lose("a");  // partition 0 is orphaned; b and c hold one each
  auto outcomes = repair(cluster, {"b"});
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(outcomes[0].agent == "c");
  BOOST_TEST(outcomes[0].error == "disk full on b");
  BOOST_TEST((cluster.held_by("b") == Partitions{1}));
  BOOST_TEST((cluster.held_by("c") == Partitions{0, 2}));
}

BOOST_AUTO_TEST_CASE(an_orphan_no_live_agent_takes_waits_with_every_failure_named) {
  auto cluster = started(3, 1, 3, 1);
  cluster.lose("a");
  auto outcomes = repair(cluster, {"b", "c"});
  BOOST_REQUIRE_EQUAL(outcomes.size(), 1u);
  BOOST_TEST(outcomes[0].agent.empty());
  BOOST_TEST(outcomes[0].error == "disk full on b; disk full on c");
  // The last agent lost: every partition waits for a joining agent.
  cluster.lose("b");
  cluster.lose("c");
  outcomes = repair(cluster);
  BOOST_REQUIRE_EQUAL(outcomes.size(), 3u);
  for (const auto& r : outcomes) BOOST_TEST(r.agent.empty());
  BOOST_TEST(cluster.worker_count() == 0);
}

BOOST_AUTO_TEST_CASE(a_joining_agent_gets_the_partitions_with_the_fewest_holders_before_its_workers_get_ids) {
  auto cluster = started(4, 1, 2, 1);  // a {0, 2}, b {1, 3}
  cluster.lose("b");
  repair(cluster, {"a"});  // 1 and 3 find no home
  auto share = cluster.begin_join("c", 2);
  // 4 replicas over 2 agents: 2 each, the orphans first.
  BOOST_TEST((share == Partitions{1, 3}));
  BOOST_TEST(cluster.joining("c"));
  BOOST_TEST(!cluster.live("c"));
  BOOST_TEST(cluster.worker_count() == 1);
  BOOST_TEST(cluster.live_agents() == std::vector<std::string>{"a"});
  auto ids = cluster.joined("c");
  // Ids are never reused: b's worker was 1.
  BOOST_TEST((ids == Workers{2, 3}));
  BOOST_TEST(cluster.live("c"));
  BOOST_TEST((cluster.held_by("c") == Partitions{1, 3}));
  BOOST_TEST(cluster.worker_count() == 3);
  BOOST_TEST(cluster.joined("c").empty());  // once
}

BOOST_AUTO_TEST_CASE(an_agent_whose_placement_failed_takes_no_part_and_may_join_again) {
  auto cluster = started(2, 1, 1, 1);
  cluster.begin_join("b", 1);
  cluster.join_failed("b");
  BOOST_TEST(!cluster.live("b"));
  BOOST_TEST(!cluster.joining("b"));
  BOOST_TEST(cluster.held_by("b").empty());
  BOOST_TEST(cluster.worker_count() == 1);
  BOOST_TEST(cluster.joined("b").empty());
  cluster.begin_join("b", 1);
  BOOST_TEST((cluster.joined("b") == Workers{1}));
}

BOOST_AUTO_TEST_CASE(an_agent_lost_while_joining_gets_no_workers) {
  auto cluster = started(2, 1, 1, 1);
  cluster.begin_join("b", 2);
  auto loss = cluster.lose("b");
  BOOST_REQUIRE(loss.has_value());
  BOOST_TEST(loss->workers.empty());
  BOOST_TEST(cluster.joined("b").empty());
  BOOST_TEST(cluster.worker_count() == 1);
}

BOOST_AUTO_TEST_CASE(a_dead_worker_is_respawned_by_its_live_agent_under_a_fresh_id) {
  auto cluster = started(2, 1, 2, 1);  // worker 0 on a, 1 on b
  BOOST_TEST(cluster.respawner(0).value_or("") == "a");
  BOOST_TEST(!cluster.respawner(9).has_value());
  auto fresh = cluster.respawned("a");
  BOOST_REQUIRE(fresh.has_value());
  BOOST_TEST(*fresh == 2);
  BOOST_TEST(cluster.agent_of(2) == "a");
  // A respawned worker replaces its dead one in the count.
  BOOST_TEST(cluster.worker_count() == 2);
  cluster.lose("b");
  BOOST_TEST(!cluster.respawner(1).has_value());
  BOOST_TEST(!cluster.respawned("b").has_value());
  // The dead worker's id and its replacement both leave with their agent.
  auto loss = cluster.lose("a");
  BOOST_REQUIRE(loss.has_value());
  BOOST_TEST((loss->workers == Workers{0, 2}));
}

BOOST_AUTO_TEST_SUITE_END()
