#include <boost/test/unit_test.hpp>

#include <vector>

#include "runtime/cluster/agent_liveness.hpp"

using namespace cerebro;

namespace {

// Time as seconds from an arbitrary origin: no sleeps, the clock is a parameter.
AgentLiveness::TimePoint at(double seconds) {
  return AgentLiveness::TimePoint{} +
         std::chrono::duration_cast<AgentLiveness::Clock::duration>(std::chrono::duration<double>(seconds));
}

using Ids = std::vector<AgentId>;

Ids lost_at(AgentLiveness& liveness, double seconds) {
  Ids ids;
  for (const auto& lost : liveness.tick(at(seconds))) ids.push_back(lost.agent);
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(agent_liveness)

BOOST_AUTO_TEST_CASE(an_agent_heard_from_within_the_timeout_is_not_lost) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  BOOST_TEST(lost_at(liveness, 10).empty());  // exactly the timeout: not yet longer
  BOOST_TEST(liveness.heartbeat(1, at(9)));
  BOOST_TEST(lost_at(liveness, 19).empty());
  BOOST_TEST(liveness.tracks(1));
}

BOOST_AUTO_TEST_CASE(a_silent_agent_is_lost_once_and_then_forgotten) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  liveness.joined(2, at(0));
  liveness.heartbeat(2, at(5));
  BOOST_TEST(lost_at(liveness, 10.5) == Ids({1}));
  BOOST_TEST(!liveness.tracks(1));
  BOOST_TEST(lost_at(liveness, 11).empty());  // reported once
  BOOST_TEST(lost_at(liveness, 15.5) == Ids({2}));
  BOOST_TEST(lost_at(liveness, 100).empty());
}

BOOST_AUTO_TEST_CASE(several_agents_lost_at_one_tick_come_in_id_order) {
  AgentLiveness liveness(std::chrono::seconds(1));
  liveness.joined(7, at(0));
  liveness.joined(3, at(0));
  liveness.joined(5, at(3));
  BOOST_TEST(lost_at(liveness, 2) == Ids({3, 7}));
  BOOST_TEST(liveness.tracks(5));
}

BOOST_AUTO_TEST_CASE(a_heartbeat_from_an_unknown_or_lost_agent_is_refused) {
  AgentLiveness liveness(std::chrono::seconds(10));
  BOOST_TEST(!liveness.heartbeat(4, at(0)));
  BOOST_TEST(!liveness.tracks(4));
  liveness.joined(4, at(0));
  BOOST_TEST(lost_at(liveness, 11) == Ids({4}));
  // A lost agent comes back only by joining again, not by a late heartbeat.
  BOOST_TEST(!liveness.heartbeat(4, at(12)));
  BOOST_TEST(lost_at(liveness, 30).empty());
  liveness.joined(4, at(30));
  BOOST_TEST(liveness.heartbeat(4, at(35)));
  BOOST_TEST(lost_at(liveness, 44).empty());
}

BOOST_AUTO_TEST_CASE(an_agent_that_left_is_not_reported_lost) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  liveness.left(1);
  BOOST_TEST(!liveness.tracks(1));
  BOOST_TEST(lost_at(liveness, 60).empty());
  liveness.left(99);  // unknown: nothing happens
}

BOOST_AUTO_TEST_CASE(a_late_heartbeat_does_not_move_the_clock_back) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  liveness.heartbeat(1, at(8));
  liveness.heartbeat(1, at(3));  // delivered late
  BOOST_TEST((liveness.last_heard(1) == at(8)));
  BOOST_TEST(lost_at(liveness, 17).empty());
  BOOST_TEST(lost_at(liveness, 18.5) == Ids({1}));
}

BOOST_AUTO_TEST_CASE(a_lost_agent_comes_with_how_long_it_was_silent) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  liveness.heartbeat(1, at(2));
  auto lost = liveness.tick(at(14.5));
  BOOST_TEST(lost.size() == 1u);
  BOOST_TEST(lost[0].agent == 1);
  BOOST_TEST(lost[0].silence.count() == 12.5, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(joining_again_restarts_the_clock) {
  AgentLiveness liveness(std::chrono::seconds(10));
  liveness.joined(1, at(0));
  liveness.joined(1, at(9));
  BOOST_TEST(lost_at(liveness, 15).empty());
  BOOST_TEST(!liveness.last_heard(2).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
