// The test module of the datasets executable; the suites live in the other test_datasets_*.cpp files.
#define BOOST_TEST_MODULE datasets
#include <boost/test/unit_test.hpp>
