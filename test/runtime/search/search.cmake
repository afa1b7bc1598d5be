# AutoML search procedures at epoch boundaries (ASHA, Hyperband, PBT, replay of
# recorded decisions), their spec keys, and ExperimentControl driven with each
# procedure by a simulated cluster with a fake checkpoint shell.
cerebro_add_test(test_search
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_search_asha.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_hyperband.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_pbt.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_replay.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_spec.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_tpe.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_tpe_search.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_registry.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_search_sim.cpp
  LIBS cerebro_runtime
  TIMEOUT 60
  LABELS search)
