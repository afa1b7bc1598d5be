// The test module of the simulator executable; the suites live in the other
// test_simulator_*.cpp files.
#define BOOST_TEST_MODULE simulator
#include <boost/test/unit_test.hpp>
