// The test module of the scheduling executable; the suites live in the other
// test_scheduling_*.cpp files.
#define BOOST_TEST_MODULE scheduling
#include <boost/test/unit_test.hpp>
