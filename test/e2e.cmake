# End-to-end: the real `cerebro` executable on small Fashion-MNIST subsets and
# on bad inputs.
cerebro_add_test(test_e2e_run
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_run.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_run cerebro)
cerebro_add_test(test_e2e_bad_input
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_bad_input.cpp
  LIBS cerebro_runtime ZLIB::ZLIB
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_bad_input cerebro)
cerebro_add_test(test_runtime
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_store.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_control.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_resume.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_lifecycle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_state_cache.cpp
  LIBS cerebro_runtime rocksdb::rocksdb
  LABELS runtime)
cerebro_add_test(test_cluster
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cluster.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS cluster)
add_dependencies(test_cluster cerebro)
# The gang allreduce probe through the real executable.
cerebro_add_test(test_e2e_gang_probe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_gang_probe.cpp
  LIBS cerebro_runtime
  TIMEOUT 120
  LABELS e2e)
add_dependencies(test_e2e_gang_probe cerebro)
# Data: image folders, the prepared-data cache, out-of-core partitions.
cerebro_add_test(test_e2e_data
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_data.cpp
  LIBS cerebro_runtime cerebro_datasets ${CEREBRO_STB_LIBRARY}
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_data cerebro)
# Data-parallel gangs in real runs (two agents on loopback; a member dying; one hung).
cerebro_add_test(test_e2e_gangs
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_gangs.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_gangs cerebro)
# Pipeline configs in real runs (forced, over the model budget, a
# failing stage, stages on two agent processes).
cerebro_add_test(test_e2e_pipeline
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_pipeline.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_pipeline cerebro)
