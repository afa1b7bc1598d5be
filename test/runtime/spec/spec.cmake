# Experiment spec (TOML) parsing and search-space expansion: plain C++, no
# actors, no LibTorch.
cerebro_add_test(test_spec
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_parse.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_errors.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_search_space.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_kinds.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_paths.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_spec_datasets.cpp
  LIBS cerebro_runtime
  TIMEOUT 60
  LABELS spec)
