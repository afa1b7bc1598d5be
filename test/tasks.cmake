# Tasks: regression, multilabel and a TorchScript training template
# end to end through the real `cerebro` executable on real data that ships with
# Debian (scikit-learn's bundled datasets, exported to CSV by the test), with
# resume, a fault, bad input and batch prediction.
cerebro_add_test(test_e2e_tasks
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_tasks.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_tasks cerebro)
