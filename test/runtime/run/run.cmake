# A run's recovery and finishing (runtime/run) on a real state store.
cerebro_add_test(test_runtime_run
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_run.cpp
  LIBS cerebro_runtime_run rocksdb::rocksdb
  TIMEOUT 60
  LABELS runtime)
