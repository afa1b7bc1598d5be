# Embedding: the dataset-source registry, the spec builder, results, model
# registration and the embedded cluster in the test's own actor system; and
# examples/embed built against an installed copy of the project.
cerebro_add_test(test_embed
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_embed_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_embed_dataset_source.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_embed_spec_builder.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_embed_cluster.cpp
  LIBS cerebro_actors
  TIMEOUT 180
  LABELS embed)

# Installs the build into a fresh prefix under the build tree (a stable path,
# so ccache hits when it runs again), configures and builds examples/embed
# with find_package(cerebro) from that prefix only, runs it and checks its
# result file (test/scripts/embed_install.cmake).
add_test(NAME test_embed_install
  COMMAND ${CMAKE_COMMAND}
    -DBINARY_DIR=${PROJECT_BINARY_DIR}
    -DEXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/embed
    -DWORK_DIR=${PROJECT_BINARY_DIR}/embed-install-test
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCOMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
    -P ${CEREBRO_TEST_DIR}/scripts/embed_install.cmake)
set_tests_properties(test_embed_install PROPERTIES TIMEOUT 400 LABELS embed)

# AttachedCluster against a real coordinator and agent (the cerebro binary).
cerebro_add_test(test_embed_attached
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_embed_attached.cpp
  LIBS cerebro_actors
  TIMEOUT 180
  LABELS embed)
add_dependencies(test_embed_attached cerebro)
