#pragma once
// Plain text as language-model examples (`source = "text"`, docs/TASKS.md "Text"): a UTF-8 text file, or a
// folder of them read in name order (subfolders too), split into pieces (datasets/tokenizer.hpp
// split_pieces) and cut into windows of `window` pieces: one example per window, each file's last window
// shorter. The pieces stay text in the field `tokens_text` until the ETL's tokenize step, after the
// split, gives them ids (the vocabulary comes from the training windows only). The features are
// {window} floats, filled by that step.
//
// In a folder, files holding a NUL byte (binary indexes such as fortune's .dat files) are skipped and
// named through `progress`, as are links to a file already read; a path that is neither a file nor a
// folder, or one without any text, is an error naming it.

#include <cstdint>
#include <functional>
#include <string>

#include "datasets/dataset.hpp"
#include "datasets/tokenizer.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

struct TextSourceOptions {
  std::string path;
  int64_t window = 0;  // pieces per example, at least 2 (a model predicts each next piece)
  TokenizerKind tokenizer = TokenizerKind::words;
};

Result<Dataset> load_text_source(const TextSourceOptions& options,
                                 const std::function<void(const std::string&)>& progress = {});

}  // namespace cerebro::datasets
