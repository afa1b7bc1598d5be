# datasets: IDX/CSV loaders, normalization, shards + manifest, and the prepare ETL.
# Synthetic IDX/CSV files are written by the tests; the real Fashion-MNIST is used when installed.
cerebro_add_test(test_datasets
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_core.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_idx.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_csv.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_shard.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_fields.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_text.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_coco.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_prepare.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_images.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_cache.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_datasets_read_ahead.cpp
  LIBS cerebro_datasets ZLIB::ZLIB ${CEREBRO_STB_LIBRARY}
  TIMEOUT 60
  LABELS datasets)
