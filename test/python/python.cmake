# The Python client (python/, docs/PYTHON.md) under Debian's python3 with pytest: its unit tests
# against a stub server on 127.0.0.1, and its integration tests and the guide's blocks against a real
# coordinator and agent (the cerebro executable) on free loopback ports.
find_program(CEREBRO_TPE_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_python_client
  COMMAND ${CEREBRO_TPE_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(test_python_client PROPERTIES TIMEOUT 600 LABELS "python;api"
  ENVIRONMENT "CEREBRO_BINARY=$<TARGET_FILE:cerebro>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;CEREBRO_CACHE_DIR=${PROJECT_BINARY_DIR}/test-prepared-cache")
