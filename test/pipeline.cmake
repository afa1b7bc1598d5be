# Pipeline stages as actors: a unit through stage actors in one
# actor system, and across two actor systems over loopback TCP.
cerebro_add_test(test_pipeline
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pipeline_actors.cpp
  LIBS cerebro_actors
  TIMEOUT 120
  LABELS models)
target_precompile_headers(test_pipeline PRIVATE ${PROJECT_SOURCE_DIR}/models/torch_pch.hpp)

# `cerebro pipeline-probe` (the benchmark's command) on a tiny model with
# dropout: it runs all four modes and the stage actors match the in-process
# pipeline (with dropout they did not, before each stage had its own).
add_test(NAME test_pipeline_probe
  COMMAND $<TARGET_FILE:cerebro> pipeline-probe --params "{\"model\": \"mlp\", \"hidden\": [16], \"dropout\": 0.3}" --shape 1,8,8
    --examples 64 --rounds 1 --json)
set_tests_properties(test_pipeline_probe PROPERTIES TIMEOUT 120 LABELS models
  PASS_REGULAR_EXPRESSION "\"actors_match_in_process\": true")
add_test(NAME test_pipeline_probe_bad_stages
  COMMAND $<TARGET_FILE:cerebro> pipeline-probe --stages 1)
set_tests_properties(test_pipeline_probe_bad_stages PROPERTIES TIMEOUT 60 LABELS models
  PASS_REGULAR_EXPRESSION "error: --stages: a pipeline needs at least 2 stages, got 1")

# Steering: a pipeline config added (and cloned) mid-run through
# the client API on an embedded cluster of 2 workers.
cerebro_add_test(test_steering_pipeline
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_steering_pipeline.cpp
  LIBS cerebro_actors cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
