# The actors' protocols on CAF's deterministic scheduler (caf/test/dsl.hpp,
# header-only in Debian's libcaf-dev): messages are delivered and time moves
# only when a test says so. CAF's test framework brings its own runner and
# main, hence an executable of its own (not Boost.Test).
add_executable(test_actors_coordinator ${CMAKE_CURRENT_LIST_DIR}/test_actors_coordinator.cpp)
target_link_libraries(test_actors_coordinator PRIVATE cerebro_actors)
add_test(NAME test_actors_coordinator COMMAND test_actors_coordinator)
set_tests_properties(test_actors_coordinator PROPERTIES TIMEOUT 60 LABELS actors)
