#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "runtime/cluster/shard_layout.hpp"

using namespace cerebro;

namespace {
using Partitions = std::vector<PartitionId>;
using Holds = std::vector<Partitions>;

void place_all(ShardLayout& layout, const std::vector<std::string>& agents) {
  auto holds = layout.initial(agents.size());
  for (size_t a = 0; a < agents.size(); ++a)
    for (auto p : holds[a]) layout.placed(agents[a], p);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(shard_layout)

BOOST_AUTO_TEST_CASE(the_first_placement_is_round_robin_with_replicas) {
  ShardLayout layout(4, 2);
  BOOST_TEST((layout.initial(3) == Holds{{0, 2, 3}, {0, 1, 3}, {1, 2}}));
  // No more copies than agents.
  BOOST_TEST((layout.initial(1) == Holds{{0, 1, 2, 3}}));
  ShardLayout single(3, 1);
  BOOST_TEST((single.initial(2) == Holds{{0, 2}, {1}}));
}

BOOST_AUTO_TEST_CASE(nothing_is_held_until_placed) {
  ShardLayout layout(3, 1);
  BOOST_TEST((layout.orphans() == Partitions{0, 1, 2}));
  layout.placed("a", 1);
  BOOST_TEST((layout.orphans() == Partitions{0, 2}));
  BOOST_TEST((layout.held_by("a") == Partitions{1}));
  BOOST_TEST(layout.held_by("b").empty());
}

BOOST_AUTO_TEST_CASE(a_lost_agent_leaves_orphans_only_where_it_held_the_last_replica) {
  ShardLayout layout(4, 2);
  place_all(layout, {"a", "b", "c"});  // a: 0 2 3, b: 0 1 3, c: 1 2
  layout.forget("a");
  BOOST_TEST(layout.orphans().empty());
  layout.forget("b");
  BOOST_TEST((layout.orphans() == Partitions{0, 3}));
  BOOST_TEST((layout.held_by("c") == Partitions{1, 2}));
}

BOOST_AUTO_TEST_CASE(an_orphan_goes_to_the_live_agent_holding_the_fewest) {
  ShardLayout layout(4, 1);
  place_all(layout, {"a", "b", "c"});                   // a: 0 3, b: 1, c: 2
  BOOST_TEST(layout.emptiest({"a", "b", "c"}) == "b");  // b and c hold one: the first wins
  layout.placed("b", 3);
  BOOST_TEST(layout.emptiest({"a", "b", "c"}) == "c");
  BOOST_TEST(layout.emptiest({}) == "");
}

BOOST_AUTO_TEST_CASE(a_joining_agent_takes_an_even_share_the_least_held_first) {
  ShardLayout layout(4, 2);
  place_all(layout, {"a", "b"});  // every partition on both
  layout.forget("b");             // now each on one
  layout.placed("a", 0);
  // 4 partitions x 2 replicas over 3 agents: a share of 3, fewest holders first.
  BOOST_TEST((layout.share_for_joining(3) == Partitions{0, 1, 2}));
  // Partitions already short of holders come first.
  ShardLayout short_of_holders(4, 1);
  short_of_holders.placed("a", 0);
  short_of_holders.placed("a", 1);
  short_of_holders.placed("a", 3);
  BOOST_TEST((short_of_holders.share_for_joining(2) == Partitions{0, 2}));  // 2 first, returned in id order
  // At least one partition, however many agents.
  BOOST_TEST(short_of_holders.share_for_joining(100).size() == 1u);
  BOOST_TEST((short_of_holders.share_for_joining(100) == Partitions{2}));
}

BOOST_AUTO_TEST_SUITE_END()
