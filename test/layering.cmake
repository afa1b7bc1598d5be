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
