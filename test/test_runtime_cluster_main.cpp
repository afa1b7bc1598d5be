// The cluster's plain bookkeeping (runtime/cluster): agent liveness and the
// shard layout.
#define BOOST_TEST_MODULE runtime_cluster
#include <boost/test/unit_test.hpp>
