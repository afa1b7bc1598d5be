// The scheduler's kept durable states (runtime/store/state_cache.hpp): a
// config's entry is its last put state until taken or erased,
// states over the size limit are not kept, and the least recently used go
// first.
#include <boost/test/unit_test.hpp>

#include "runtime/store/state_cache.hpp"

namespace cerebro {

BOOST_AUTO_TEST_SUITE(state_cache)

BOOST_AUTO_TEST_CASE(a_config_takes_its_latest_put_state_once) {
  DurableStateCache cache(1000, 100);
  BOOST_TEST(!cache.take(1).has_value());
  cache.put(1, "first");
  cache.put(2, "other");
  cache.put(1, "second");  // the next commit of config 1 replaces its state
  BOOST_TEST(cache.bytes() == 11);
  BOOST_TEST(cache.take(1).value() == "second");
  // Taken by the config's next unit: a second attempt of it reads the store.
  BOOST_TEST(!cache.take(1).has_value());
  BOOST_TEST(cache.bytes() == 5);
  cache.erase(2);  // e.g. a state copy or a gang writes config 2 now
  BOOST_TEST(!cache.take(2).has_value());
  BOOST_TEST(cache.size() == 0u);
  BOOST_TEST(cache.bytes() == 0);
  BOOST_TEST(cache.hits() == 1);
  BOOST_TEST(cache.misses() == 3);
}

BOOST_AUTO_TEST_CASE(large_states_are_not_kept_and_the_budget_drops_the_least_recently_put) {
  DurableStateCache cache(30, 12);
  BOOST_TEST(cache.keeps(12));
  BOOST_TEST(!cache.keeps(13));
  cache.put(1, "old state of one");  // 16 bytes: over the per-state limit
  BOOST_TEST(!cache.take(1).has_value());
  cache.put(1, std::string(10, 'a'));
  cache.put(2, std::string(10, 'b'));
  cache.put(3, std::string(10, 'c'));  // 30 bytes: fits
  cache.put(1, std::string(10, 'A'));  // 1 is now the most recently put
  cache.put(4, std::string(10, 'd'));  // 40: drops 2, the least recently put
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(cache.bytes() == 30);
  BOOST_TEST(!cache.take(2).has_value());
  BOOST_TEST(cache.take(1).value() == std::string(10, 'A'));
  BOOST_TEST(cache.take(3).has_value());
  // A state that grew past the limit is not kept, and the old one goes too.
  cache.put(4, std::string(20, 'e'));
  BOOST_TEST(!cache.take(4).has_value());
  BOOST_TEST(!DurableStateCache(0, 12).keeps(1));  // a zero budget keeps nothing
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro
