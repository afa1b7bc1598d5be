// The test module of the models executable; the suites live in the other
// test_models_*.cpp files.
#define BOOST_TEST_MODULE models
#include <boost/test/unit_test.hpp>

#include "models/unit_trainer.hpp"

// One intra-op thread, as every worker configures it: results then depend only
// on the inputs, and the tests do not compete for the 2 cores. The allocator
// as cerebro's main sets it, before any thread starts.
struct SingleThreadedTorch {
  SingleThreadedTorch() {
    cerebro::models::configure_allocator();
    cerebro::models::configure_threads(1);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SingleThreadedTorch);
