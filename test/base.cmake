# runtime/base's helpers (Status codes, checksum, file I/O, timestamps) and
# the CAF error category that carries the codes between actors.
cerebro_add_test(test_base
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base.cpp
  LIBS cerebro_runtime_base
  LABELS base)
cerebro_add_test(test_net_errors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_errors.cpp
  LIBS cerebro_runtime_net
  LABELS base)
# The log-line sink and LogBook (the REPL's log lines).
cerebro_add_test(test_base_log_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base_log_lines.cpp
  LIBS cerebro_runtime_base
  LABELS base)
cerebro_add_test(test_net_run_file_paths
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_net_run_file_paths.cpp
  LIBS cerebro_runtime_net
  LABELS base)
