# The HTTP API's plain parts (runtime/api): routes, bodies, tokens, views,
# /metrics; the server itself is tested in test/actors/http.
cerebro_add_test(test_api_core
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_api_core.cpp
  LIBS cerebro_runtime_api cerebro_runtime
  LABELS api)
# Reading runs that do not train (opened once, kept),
# the units a poller has not seen, the one-time link and the login throttle.
cerebro_add_test(test_api_finished_runs
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_api_finished_runs.cpp
  LIBS cerebro_runtime_api cerebro_runtime
  LABELS api)
cerebro_add_test(test_api_login
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_api_login.cpp
  LIBS cerebro_runtime_api
  LABELS api)
