# The layering rule (docs/ARCHITECTURE.md): a core library cannot include CAF.
# The probe is a core object library whose one source includes a CAF header;
# building it must fail with the rule's message. Not part of `all`.
add_library(layering_probe OBJECT EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/layering_probe.cpp)
target_link_libraries(layering_probe PRIVATE cerebro_runtime_base)
cerebro_core_library(layering_probe)
add_test(NAME test_layering_core_rejects_caf
  COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target layering_probe)
set_tests_properties(test_layering_core_rejects_caf PROPERTIES
  PASS_REGULAR_EXPRESSION "must not include CAF" TIMEOUT 120 LABELS layering)

# The core never throws (docs/ARCHITECTURE.md, "Errors are values with a
# code"): no `throw` and no catch of cerebro::Error in runtime/ (but
# runtime/net) and datasets/, comments and literals aside. The check names
# file:line for each; the second test proves it finds one (a probe file with a
# throw and a catch among look-alikes in comments and literals).
find_program(CEREBRO_CHECK_PYTHON python3 REQUIRED)
set(CEREBRO_THROW_CHECK ${CEREBRO_TEST_DIR}/scripts/check_core_never_throws.py)
add_test(NAME test_layering_core_never_throws
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_THROW_CHECK} ${PROJECT_SOURCE_DIR} runtime datasets runtime/net!)
add_test(NAME test_layering_core_check_finds_a_throw
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_THROW_CHECK}
    --expect test/layering/core_throw_probe/probe.cpp:13,test/layering/core_throw_probe/probe.cpp:16
    ${PROJECT_SOURCE_DIR} test/layering/core_throw_probe)
set_tests_properties(test_layering_core_never_throws test_layering_core_check_finds_a_throw PROPERTIES
  TIMEOUT 60 LABELS layering)
# Every actor is typed (docs/ARCHITECTURE.md, "Actors have typed interfaces"):
# no untyped behavior, event-based actor or caf::actor handle in the shells,
# the network layer or the embedding example; the second test proves the
# check finds them (a probe among look-alikes).
set(CEREBRO_TYPED_CHECK ${CEREBRO_TEST_DIR}/scripts/check_typed_actors.py)
add_test(NAME test_layering_actors_are_typed
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_TYPED_CHECK} ${PROJECT_SOURCE_DIR} actors tools runtime/net examples/embed)
add_test(NAME test_layering_typed_actor_check_finds_untyped
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_TYPED_CHECK}
    --expect test/layering/typed_actor_probe/probe.cpp:9,test/layering/typed_actor_probe/probe.cpp:10,test/layering/typed_actor_probe/probe.cpp:12
    ${PROJECT_SOURCE_DIR} test/layering/typed_actor_probe)
set_tests_properties(test_layering_actors_are_typed test_layering_typed_actor_check_finds_untyped PROPERTIES
  TIMEOUT 60 LABELS layering)
# The project speaks for itself (docs/ARCHITECTURE.md, "Tests"): no source,
# doc, example or file name cites a tracker entry or a session by number; the
# second test proves the scan finds one in a file's text and in a file's name.
set(CEREBRO_HISTORY_CHECK ${CEREBRO_TEST_DIR}/scripts/check_no_history_refs.py)
add_test(NAME test_layering_no_history_citations COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_HISTORY_CHECK} ${PROJECT_SOURCE_DIR})
add_test(NAME test_layering_history_check_finds_citations COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_HISTORY_CHECK} --self-test)
set_tests_properties(test_layering_no_history_citations test_layering_history_check_finds_citations PROPERTIES
  TIMEOUT 60 LABELS layering)
# Names are enums (docs/ARCHITECTURE.md, "Names are enums; text only at the
# boundaries"): a compare with a string literal only in the parsers the check
# lists, at most 15 in all; the second test proves it finds compares on either
# side of the operator among look-alikes in a comment and a literal.
set(CEREBRO_COMPARE_CHECK ${CEREBRO_TEST_DIR}/scripts/check_string_compares.py)
add_test(NAME test_layering_names_are_enums
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_COMPARE_CHECK} ${PROJECT_SOURCE_DIR} actors datasets models runtime tools
    examples)
add_test(NAME test_layering_compare_check_finds_literals
  COMMAND ${CEREBRO_CHECK_PYTHON} ${CEREBRO_COMPARE_CHECK}
    --expect test/layering/string_compare_probe/probe.cpp:9,test/layering/string_compare_probe/probe.cpp:10
    ${PROJECT_SOURCE_DIR} test/layering/string_compare_probe)
set_tests_properties(test_layering_names_are_enums test_layering_compare_check_finds_literals PROPERTIES
  TIMEOUT 60 LABELS layering)
