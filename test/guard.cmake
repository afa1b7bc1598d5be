# The frame guard in front of the coordinator's middleman: BASP header parsing
# and the relay in process (no CAF), then a coordinator process refusing an
# oversized frame from a raw TCP peer.
cerebro_add_test(test_frame_guard
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_frame_guard.cpp
  LIBS cerebro_runtime
  TIMEOUT 60
  LABELS guard)
cerebro_add_test(test_cluster_guard
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cluster_guard.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS "guard;cluster")
add_dependencies(test_cluster_guard cerebro)
