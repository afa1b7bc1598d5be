# The HTTP server (actors/http) in front of a real coordinator, the dashboard
# in headless Chromium and a real Prometheus scraping /metrics.
cerebro_add_test(test_api_server
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_api_server.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS api e2e)
target_include_directories(test_api_server PRIVATE ${HTTPLIB_INCLUDE_DIR})
target_compile_definitions(test_api_server PRIVATE ${HTTPLIB_DEFINITIONS})
target_link_libraries(test_api_server PRIVATE ${HTTPLIB_LIBRARY} OpenSSL::SSL OpenSSL::Crypto)
add_dependencies(test_api_server cerebro)
# The browser and Prometheus checks are Python scripts (Debian's python3 with python3-selenium,
# chromium-driver; Debian's prometheus) run against the real executable.
find_program(DEBIAN_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_api_dashboard
  COMMAND ${DEBIAN_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_api_dashboard.py ${PROJECT_BINARY_DIR}/tools/cerebro
    ${PROJECT_BINARY_DIR}/test-artifacts)
set_tests_properties(test_api_dashboard PROPERTIES TIMEOUT 300 LABELS "api;e2e")
add_test(NAME test_api_prometheus
  COMMAND ${DEBIAN_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_api_prometheus.py ${PROJECT_BINARY_DIR}/tools/cerebro)
set_tests_properties(test_api_prometheus PROPERTIES TIMEOUT 300 LABELS "api;e2e")
add_test(NAME test_api_bench
  COMMAND ${DEBIAN_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_api_bench.py ${PROJECT_SOURCE_DIR}
    ${PROJECT_BINARY_DIR}/tools/cerebro)
set_tests_properties(test_api_bench PROPERTIES TIMEOUT 300 LABELS "api;e2e")
add_test(NAME test_api_doc_examples
  COMMAND ${DEBIAN_PYTHON} ${CEREBRO_TEST_DIR}/scripts/check_api_doc.py ${PROJECT_SOURCE_DIR}
    ${PROJECT_BINARY_DIR}/tools/cerebro)
set_tests_properties(test_api_doc_examples PROPERTIES TIMEOUT 300 LABELS "api;e2e")
add_test(NAME test_ui_dir
  COMMAND ${DEBIAN_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_ui_dir.py ${PROJECT_BINARY_DIR}/tools/cerebro)
set_tests_properties(test_ui_dir PROPERTIES TIMEOUT 300 LABELS "api;e2e")
