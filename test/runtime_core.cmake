# The core layers the actors are shells around: agent liveness (runtime/cluster)
# and a run's recovery and finishing (runtime/run). No CAF, no LibTorch.
cerebro_add_test(test_runtime_liveness
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_liveness.cpp
  LIBS cerebro_runtime_cluster
  TIMEOUT 60
  LABELS runtime)
cerebro_add_test(test_runtime_run
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_run.cpp
  LIBS cerebro_runtime_run rocksdb::rocksdb
  TIMEOUT 60
  LABELS runtime)
