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
