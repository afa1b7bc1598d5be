# The example notebooks (examples/notebooks/) executed cell by cell with nbconvert under Debian's python3,
# each against its own coordinator and agent (the cerebro executable) on free loopback ports; a cell
# that raises, or outputs and server state other than the notebook's text promises, fail the test.
find_program(CEREBRO_NOTEBOOK_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_notebooks
  COMMAND ${CEREBRO_NOTEBOOK_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(test_notebooks PROPERTIES TIMEOUT 600 LABELS "python;e2e"
  ENVIRONMENT "CEREBRO_BINARY=$<TARGET_FILE:cerebro>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;CEREBRO_CACHE_DIR=${PROJECT_BINARY_DIR}/test-prepared-cache")
