# The cerebro executable loads tcmalloc (tools/CMakeLists.txt): a linker that
# drops libraries no symbol is taken from (--as-needed) would silently bring
# back glibc's malloc and its one-arena lock between workers.
add_test(NAME test_cerebro_loads_tcmalloc COMMAND ldd $<TARGET_FILE:cerebro>)
set_tests_properties(test_cerebro_loads_tcmalloc PROPERTIES
  PASS_REGULAR_EXPRESSION "libtcmalloc_minimal\\.so" TIMEOUT 60 LABELS tools)
# The crash handler of the cerebro executable (tools/crash_handler.cpp).
cerebro_add_test(test_crash_handler
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_crash_handler.cpp
  LIBS cerebro_runtime_base
  LABELS tools)
add_dependencies(test_crash_handler cerebro)
# The REPL: steering logic, the client API on an embedded cluster
# (human in the loop on Fashion-MNIST), the REPL driven by a script and on a
# pseudo-terminal.
cerebro_add_test(test_repl_control
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_repl_control.cpp
  LIBS cerebro_runtime
  LABELS repl)
cerebro_add_test(test_repl_steering
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_repl_steering.cpp
  LIBS cerebro_actors cerebro_runtime
  TIMEOUT 300
  LABELS repl e2e)
cerebro_add_test(test_repl_script
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_repl_script.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS repl e2e)
add_dependencies(test_repl_script cerebro)
cerebro_add_test(test_repl_terminal
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_repl_terminal.cpp
  LIBS cerebro_runtime util
  TIMEOUT 300
  LABELS repl e2e)
add_dependencies(test_repl_terminal cerebro)
