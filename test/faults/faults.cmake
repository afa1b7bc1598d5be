# The fault matrix: runs that lose processes, states or units mid-way and must
# finish with nothing lost and nothing committed twice.
cerebro_add_test(test_faults_embedded
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_faults_embedded.cpp
  LIBS cerebro_runtime rocksdb::rocksdb fmt::fmt
  TIMEOUT 600
  LABELS reliability)
add_dependencies(test_faults_embedded cerebro)
cerebro_add_test(test_faults_cluster
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_faults_cluster.cpp
  LIBS cerebro_runtime
  TIMEOUT 900
  LABELS "reliability;cluster")
add_dependencies(test_faults_cluster cerebro)
# A killed agent under each structured task (language model, captioning, detection).
cerebro_add_test(test_faults_tasks
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_faults_tasks.cpp
  LIBS cerebro_runtime
  TIMEOUT 600
  LABELS "reliability;cluster")
add_dependencies(test_faults_tasks cerebro)
