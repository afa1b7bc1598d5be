# The state store and what is kept in it: the unit log and checkpoints,
# ExperimentControl resuming from them, the stored status words and the
# scheduler's kept states.
cerebro_add_test(test_runtime
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_store.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_control.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_resume.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_lifecycle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_state_cache.cpp
  LIBS cerebro_runtime rocksdb::rocksdb
  LABELS runtime)
