# search = "tpe" end to end: the real `cerebro` executable on a
# small Fashion-MNIST subset (TPE, TPE+ASHA, warm start, bad specs).
cerebro_add_test(test_e2e_tpe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_tpe.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_tpe cerebro)
# Several objectives: the Pareto front live and final through the API, the
# dashboard (headless Chromium) and the REPL's top.
find_program(CEREBRO_TPE_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_api_pareto
  COMMAND ${CEREBRO_TPE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/scripts/test_api_pareto.py ${PROJECT_BINARY_DIR}/tools/cerebro
    ${PROJECT_BINARY_DIR}/test-artifacts)
set_tests_properties(test_api_pareto PROPERTIES TIMEOUT 300 LABELS "api;e2e"
  ENVIRONMENT "CEREBRO_CACHE_DIR=${PROJECT_BINARY_DIR}/test-prepared-cache")
