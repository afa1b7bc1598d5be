# runtime/base's helpers (Status codes, checksum, file I/O, timestamps) and
# the CAF error category that carries the codes between actors.
cerebro_add_test(test_base
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base.cpp
  LIBS cerebro_runtime_base
  LABELS base)
# The other process of test_net_errors' middleman case (test/net_error_peer.cpp).
add_executable(net_error_peer ${CMAKE_CURRENT_LIST_DIR}/net_error_peer.cpp)
target_link_libraries(net_error_peer PRIVATE cerebro_runtime_net caf::io)
cerebro_add_test(test_net_errors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_errors.cpp
  LIBS cerebro_runtime_net caf::io
  LABELS base)
target_compile_definitions(test_net_errors PRIVATE CEREBRO_NET_ERROR_PEER="$<TARGET_FILE:net_error_peer>")
add_dependencies(test_net_errors net_error_peer)
# The log-line sink and LogBook (the REPL's log lines).
cerebro_add_test(test_base_log_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base_log_lines.cpp
  LIBS cerebro_runtime_base
  LABELS base)
cerebro_add_test(test_net_run_file_paths
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_run_file_paths.cpp
  LIBS cerebro_runtime_net
  LABELS base)
