# The scheduler simulator, the critical_path policy and the MopBook index they
# rely on; plus the `cerebro simulate` command's logic (linked directly, so the
# test does not need the LibTorch-linked cerebro executable).
cerebro_add_test(test_simulator
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_book_index.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_kernels.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_policy.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_runs.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_command.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_from_run.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_simulator_gangs.cpp
    ${PROJECT_SOURCE_DIR}/tools/commands/simulate.cpp
    ${PROJECT_SOURCE_DIR}/tools/command_registry.cpp
  LIBS cerebro_runtime
  TIMEOUT 120
  LABELS scheduling)
target_include_directories(test_simulator PRIVATE ${PROJECT_SOURCE_DIR})
