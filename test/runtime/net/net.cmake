# runtime/net: the CAF error category that carries the codes between actors
# (and its peer process), the run-file paths a client accepts, and the frame
# guard.
# The other process of test_net_errors' middleman case (test/net_error_peer.cpp).
add_executable(net_error_peer ${CMAKE_CURRENT_LIST_DIR}/net_error_peer.cpp)
target_link_libraries(net_error_peer PRIVATE cerebro_runtime_net caf::io)
cerebro_add_test(test_net_errors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_errors.cpp
  LIBS cerebro_runtime_net caf::io
  LABELS base)
target_compile_definitions(test_net_errors PRIVATE CEREBRO_NET_ERROR_PEER="$<TARGET_FILE:net_error_peer>")
add_dependencies(test_net_errors net_error_peer)
cerebro_add_test(test_net_run_file_paths
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_run_file_paths.cpp
  LIBS cerebro_runtime_net
  LABELS base)
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
