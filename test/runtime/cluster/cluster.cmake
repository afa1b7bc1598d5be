# The core layers the actors are shells around: agent liveness, the shard
# layout, the coordinator's agents, experiments and decisions and the live
# cluster's decisions (runtime/cluster). No CAF, no LibTorch.
cerebro_add_test(test_runtime_cluster
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_cluster_main.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_liveness.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_shard_layout.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_coordinator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_runtime_live_cluster.cpp ${CMAKE_CURRENT_LIST_DIR}/test_runtime_dataset_registry.cpp
  LIBS cerebro_runtime_cluster
  TIMEOUT 60
  LABELS runtime)
