# The cerebro executable loads tcmalloc (tools/CMakeLists.txt): a linker that
# drops libraries no symbol is taken from (--as-needed) would silently bring
# back glibc's malloc and its one-arena lock between workers.
add_test(NAME test_cerebro_loads_tcmalloc COMMAND ldd $<TARGET_FILE:cerebro>)
set_tests_properties(test_cerebro_loads_tcmalloc PROPERTIES
  PASS_REGULAR_EXPRESSION "libtcmalloc_minimal\\.so" TIMEOUT 60 LABELS tools)
