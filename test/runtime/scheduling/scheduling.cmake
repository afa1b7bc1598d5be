# MOP scheduling core: bookkeeping, policies, unit-log invariant checks and a
# discrete-event simulation driving them together.
cerebro_add_test(test_scheduling
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_mop_book.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_policies.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_unit_log_check.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_simulation.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_priors.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_gangs.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_control_gangs.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_control_events.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_hand_over.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_pipeline.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_control_pipeline.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scheduling_worker_roster.cpp
  LIBS cerebro_runtime
  TIMEOUT 60
  LABELS scheduling)
