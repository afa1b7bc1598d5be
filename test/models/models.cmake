# models: zoo models, TorchScript models, registration, units and hops,
# export. Small synthetic datasets are built in the tests.
cerebro_add_test(test_models
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_models_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_hopping.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_params.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_export.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_task_metrics.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_gang.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_read_ahead.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_gang_rendezvous.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_pipeline.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_allocator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_state_format.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_fused_adam.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_max_pool.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_transformer.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_captioner.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_detector.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_models_field_templates.cpp
  LIBS cerebro_models cerebro_runtime_cluster
  TIMEOUT 120
  LABELS models)
# Three of the four files include LibTorch: precompile its headers once.
target_precompile_headers(test_models PRIVATE ${PROJECT_SOURCE_DIR}/models/torch_pch.hpp)
