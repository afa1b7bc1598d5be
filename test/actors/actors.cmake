# The actors' protocols on CAF's deterministic scheduler (caf/test/dsl.hpp,
# header-only in Debian's libcaf-dev): messages are delivered and time moves
# only when a test says so. CAF's test framework brings its own runner and
# main, hence an executable of its own (not Boost.Test).
add_executable(test_actors_coordinator ${CMAKE_CURRENT_LIST_DIR}/test_actors_coordinator.cpp)
target_link_libraries(test_actors_coordinator PRIVATE cerebro_actors)
add_test(NAME test_actors_coordinator COMMAND test_actors_coordinator)
set_tests_properties(test_actors_coordinator PROPERTIES TIMEOUT 60 LABELS actors)
# A node agent's refusals reach the requester with their codes: a shard that
# fails its checksum is corruption, in process, through the typed interface.
cerebro_add_test(test_agent_errors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_agent_errors.cpp
  LIBS cerebro_actors
  TIMEOUT 120
  LABELS reliability)
# The scheduler actor's protocols under CAF's deterministic test scheduler
# (caf/test/dsl.hpp), with fake workers, checkpoint and listener
# (test/actors_fakes.hpp). CAF's test engine brings its own main and runner.
cerebro_add_test(test_actors_scheduler
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_actors_scheduler.cpp
  LIBS cerebro_actors
  TIMEOUT 60
  LABELS actors)
# The run follower's protocols the same way: fake agents (placements taken,
# held or refused, workers respawned) around the real follower and scheduler.
cerebro_add_test(test_actors_follower
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_actors_follower.cpp
  LIBS cerebro_actors
  TIMEOUT 60
  LABELS actors)
# An idle actor system's scheduler threads leave the cores to training.
cerebro_add_test(test_actor_system_quiet
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_actor_system_quiet.cpp
  LIBS cerebro_actors
  TIMEOUT 60
  LABELS runtime)
# A unit's fixed cost: the checkpoint actor's group commit, driven
# through its typed interface in this process.
cerebro_add_test(test_checkpoint_group_commit
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_checkpoint_group_commit.cpp
  LIBS cerebro_actors
  TIMEOUT 60
  LABELS runtime)
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
