# Pictures of a run: the TensorBoard writer, the SVG charts and
# the HTML report as plain code; then a real run's event files decoded by an
# independent reader (Python + protoc) and its report opened in headless
# Chromium driven by Selenium (Debian's chromium, chromium-driver,
# python3-selenium; protobuf-compiler).
cerebro_add_test(test_runtime_viz
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runtime_viz.cpp
  LIBS cerebro_runtime_viz rocksdb::rocksdb
  TIMEOUT 60
  LABELS runtime viz)
cerebro_add_test(test_viz_report
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_viz_report.cpp
  LIBS cerebro_runtime
  TIMEOUT 300
  LABELS viz e2e)
add_dependencies(test_viz_report cerebro)
