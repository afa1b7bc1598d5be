# End-to-end: the real `cerebro` executable on small Fashion-MNIST subsets and
# on bad inputs.
cerebro_add_test(test_e2e_run
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_run.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_run cerebro)
cerebro_add_test(test_e2e_bad_input
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_bad_input.cpp
  LIBS cerebro_runtime ZLIB::ZLIB
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_bad_input cerebro)
cerebro_add_test(test_cluster
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cluster.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS cluster)
add_dependencies(test_cluster cerebro)
# The gang allreduce probe through the real executable.
cerebro_add_test(test_e2e_gang_probe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_gang_probe.cpp
  LIBS cerebro_runtime
  TIMEOUT 120
  LABELS e2e)
add_dependencies(test_e2e_gang_probe cerebro)
# Data: image folders, the prepared-data cache, out-of-core partitions.
cerebro_add_test(test_e2e_data
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_data.cpp
  LIBS cerebro_runtime cerebro_datasets ${CEREBRO_STB_LIBRARY}
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_data cerebro)
# Data-parallel gangs in real runs (two agents on loopback; a member dying; one hung).
cerebro_add_test(test_e2e_gangs
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_gangs.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_gangs cerebro)
# Pipeline configs in real runs (forced, over the model budget, a
# failing stage, stages on two agent processes).
cerebro_add_test(test_e2e_pipeline
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_pipeline.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_pipeline cerebro)
# Tasks: regression, multilabel and a TorchScript training template
# end to end through the real `cerebro` executable on real data that ships with
# Debian (scikit-learn's bundled datasets, exported to CSV by the test), with
# resume, a fault, bad input and batch prediction.
cerebro_add_test(test_e2e_tasks
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_tasks.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS e2e)
add_dependencies(test_e2e_tasks cerebro)
# search = "tpe" end to end: the real `cerebro` executable on a
# small Fashion-MNIST subset (TPE, TPE+ASHA, warm start, bad specs).
cerebro_add_test(test_e2e_tpe
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_tpe.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_tpe cerebro)
# Several objectives: the Pareto front live and final through the API, the
# dashboard (headless Chromium) and the REPL's top.
find_program(CEREBRO_TPE_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_api_pareto
  COMMAND ${CEREBRO_TPE_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_api_pareto.py ${PROJECT_BINARY_DIR}/tools/cerebro
    ${PROJECT_BINARY_DIR}/test-artifacts)
set_tests_properties(test_api_pareto PROPERTIES TIMEOUT 300 LABELS "api;e2e"
  ENVIRONMENT "CEREBRO_CACHE_DIR=${PROJECT_BINARY_DIR}/test-prepared-cache")
# A captioning and a detection run's pictures of test images in the API and the dashboard (headless
# Chromium).
add_test(NAME test_dashboard_examples
  COMMAND ${CEREBRO_TPE_PYTHON} ${CEREBRO_TEST_DIR}/scripts/test_dashboard_examples.py ${PROJECT_BINARY_DIR}/tools/cerebro
    ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/test-artifacts)
set_tests_properties(test_dashboard_examples PROPERTIES TIMEOUT 300 LABELS "api;e2e"
  ENVIRONMENT "CEREBRO_CACHE_DIR=${PROJECT_BINARY_DIR}/test-prepared-cache")
# docs/TASKS.md run as written: its commands (tools/make_shapes, cerebro prepare) and spec sections, the
# prepared captions, boxes and text windows checked, and `cerebro run` refusing the tasks no model trains.
find_program(CEREBRO_DOCS_PYTHON python3 REQUIRED)
add_test(NAME test_e2e_task_docs
  COMMAND ${CEREBRO_DOCS_PYTHON} ${PROJECT_SOURCE_DIR}/test/scripts/check_task_docs.py ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
set_tests_properties(test_e2e_task_docs PROPERTIES TIMEOUT 300 LABELS e2e)
# Language modelling: the zoo's transformer over the licence texts every Debian system ships, through
# the real `cerebro` executable (resume after a crash, replay, a refused context).
cerebro_add_test(test_e2e_language_model
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_language_model.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_language_model cerebro)
# Captioning and detection: the zoo's captioner and detector over generated shapes in COCO form, through
# the real `cerebro` executable (resume after a crash, replay).
cerebro_add_test(test_e2e_shapes
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_e2e_shapes.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS e2e)
add_dependencies(test_e2e_shapes cerebro)
# docs/TEMPLATES.md "Structured tasks" run as written: an LSTM language model scripted in Python that
# takes its batch as named fields, trained and scored by its own metric.
find_program(CEREBRO_TORCH_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
add_test(NAME test_e2e_field_template
  COMMAND ${CEREBRO_TORCH_PYTHON} ${PROJECT_SOURCE_DIR}/test/scripts/check_field_template_doc.py ${PROJECT_SOURCE_DIR}
    ${PROJECT_BINARY_DIR})
set_tests_properties(test_e2e_field_template PROPERTIES TIMEOUT 300 LABELS e2e)
