# The crash handler of the cerebro executable (tools/crash_handler.cpp).
cerebro_add_test(test_crash_handler
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_crash_handler.cpp
  LIBS cerebro_runtime_base
  LABELS tools)
add_dependencies(test_crash_handler cerebro)
