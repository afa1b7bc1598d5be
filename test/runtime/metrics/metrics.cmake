# runtime/metrics: BLEU-4 against NLTK's corpus_bleu, detection AP against hand-worked COCO cases, token
# counts, and shares merged into the whole.
cerebro_add_test(test_metrics
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_metrics.cpp
  LIBS cerebro_runtime_metrics
  LABELS metrics)
