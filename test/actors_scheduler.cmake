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
