// The spec's enumerated kinds: each name round-trips through its enum, and the
// scheduler table is the one list the spec, the policy factory and `simulate`
// read.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "runtime/spec/scheduler_kind.hpp"
#include "runtime/spec/search_kind.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_SUITE(spec_kinds)

BOOST_AUTO_TEST_CASE(every_search_kind_round_trips_through_its_name) {
  BOOST_TEST(search_names() == (std::vector<std::string>{"grid", "random", "asha", "hyperband", "pbt"}),
             boost::test_tools::per_element());
  BOOST_TEST(search_kinds().size() == search_names().size());
  for (SearchKind kind : search_kinds()) {
    auto parsed = parse_search_kind(to_string(kind));
    BOOST_REQUIRE(parsed.has_value());
    BOOST_TEST(*parsed == kind);
  }
  BOOST_TEST(!parse_search_kind("Grid").has_value());
  BOOST_TEST(!parse_search_kind("").has_value());
  BOOST_TEST(!parse_search_kind("bohb").has_value());
}

BOOST_AUTO_TEST_CASE(every_scheduler_kind_round_trips_through_its_name) {
  for (const SchedulerInfo& info : scheduler_registry()) {
    BOOST_TEST(to_string(info.kind) == info.name);
    auto parsed = parse_scheduler_kind(info.name);
    BOOST_REQUIRE(parsed.has_value());
    BOOST_TEST(*parsed == info.kind);
    BOOST_TEST(!info.description.empty());
  }
  BOOST_TEST(!parse_scheduler_kind("fifo").has_value());
  BOOST_TEST(!parse_scheduler_kind("all").has_value());  // `simulate --policy all` is the command's word
}

BOOST_AUTO_TEST_CASE(the_spec_lists_the_default_scheduler_first_and_simulate_runs_registry_order) {
  BOOST_TEST(to_string(kDefaultScheduler) == "critical_path");
  BOOST_TEST(scheduler_names() == (std::vector<std::string>{"critical_path", "randomized"}),
             boost::test_tools::per_element());
  BOOST_TEST(policy_names() == (std::vector<std::string>{"randomized", "critical_path"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
