# runtime/base's helpers (Status codes, checksum, file I/O, timestamps, enum
# names, fault rules) and the log-line sink.
cerebro_add_test(test_base
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base.cpp
  LIBS cerebro_runtime_base
  LABELS base)
# The log-line sink and LogBook (the REPL's log lines).
cerebro_add_test(test_base_log_lines
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_base_log_lines.cpp
  LIBS cerebro_runtime_base
  LABELS base)
