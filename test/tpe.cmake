# search = "tpe" end to end (issue 15): the real `cerebro` executable on a
# small Fashion-MNIST subset (TPE, TPE+ASHA, warm start, bad specs).
cerebro_add_test(test_e2e_tpe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_tpe.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_tpe cerebro)
