// The scheduler's kept durable states (runtime/store/state_cache.hpp, issue 11
// item 5): a config's entry is its last put state until erased, states over
// the size limit are not kept, and the least recently used go first.
#include <boost/test/unit_test.hpp>

#include "runtime/store/state_cache.hpp"

namespace cerebro {

BOOST_AUTO_TEST_SUITE(state_cache)

BOOST_AUTO_TEST_CASE(a_config_reads_its_latest_put_state_until_it_is_erased) {
  DurableStateCache cache(1000, 100);
  BOOST_TEST(!cache.get(1).has_value());
  cache.put(1, "first");
  cache.put(2, "other");
  cache.put(1, "second");  // the next commit of config 1 replaces its state
  BOOST_TEST(cache.get(1).value() == "second");
  BOOST_TEST(cache.get(2).value() == "other");
  BOOST_TEST(cache.bytes() == 11);
  cache.erase(1);  // e.g. a state copy or a gang writes config 1 now
  BOOST_TEST(!cache.get(1).has_value());
  BOOST_TEST(cache.get(2).value() == "other");
  BOOST_TEST(cache.hits() == 3);
  BOOST_TEST(cache.misses() == 2);
}

BOOST_AUTO_TEST_CASE(large_states_are_not_kept_and_the_budget_drops_the_least_recently_used) {
  DurableStateCache cache(30, 12);
  BOOST_TEST(cache.keeps(12));
  BOOST_TEST(!cache.keeps(13));
  cache.put(1, "old state of one");  // 16 bytes: over the per-state limit
  BOOST_TEST(!cache.get(1).has_value());
  cache.put(1, std::string(10, 'a'));
  cache.put(2, std::string(10, 'b'));
  BOOST_TEST(cache.get(1).has_value());  // 1 is now the most recently used
  cache.put(3, std::string(10, 'c'));    // 30 bytes: fits
  cache.put(4, std::string(10, 'd'));    // 40: drops 2, the least recently used
  BOOST_TEST(!cache.get(2).has_value());
  BOOST_TEST(cache.get(1).has_value());
  BOOST_TEST(cache.get(3).has_value());
  BOOST_TEST(cache.get(4).has_value());
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(cache.bytes() == 30);
  // A state that grew past the limit replaces nothing: the old one goes too.
  cache.put(4, std::string(20, 'e'));
  BOOST_TEST(!cache.get(4).has_value());
  BOOST_TEST(!DurableStateCache(0, 12).keeps(1));  // a zero budget keeps nothing
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro
