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
