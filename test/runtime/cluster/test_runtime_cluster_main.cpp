// The cluster's plain bookkeeping (runtime/cluster): agent liveness, the
// shard layout, the coordinator's core and the live cluster.
#define BOOST_TEST_MODULE runtime_cluster
#include <boost/test/unit_test.hpp>
