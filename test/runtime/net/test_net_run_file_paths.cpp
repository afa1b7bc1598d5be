#define BOOST_TEST_MODULE net_run_file_paths
// The paths of run files a client accepts from a coordinator (the
// TensorBoard logs travel in subdirectories): never a path out of the run directory.
#include <boost/test/unit_test.hpp>

#include "runtime/net/cluster_validation.hpp"

using namespace cerebro;

BOOST_AUTO_TEST_CASE(run_file_paths_stay_inside_the_run_directory) {
  for (auto ok : {"summary.json", "tensorboard/events.out.tfevents.1700000000.host",
                  "tensorboard/config-12/events.out.tfevents.1700000000.my-host_1"})
    BOOST_TEST(validate_run_file_path(ok).ok(), ok);
  for (auto bad : {"", "/etc/passwd", "../x", "tensorboard/../../x", "a//b", "a/", "tensorboard/.hidden", "a\\b",
                   "tensorboard/config 1/x"})
    BOOST_TEST(!validate_run_file_path(bad).ok(), bad);
  BOOST_TEST(!validate_run_file_path(std::string(300, 'a')).ok());
}
