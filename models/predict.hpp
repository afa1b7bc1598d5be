#pragma once
// Batch prediction with a trained model (`cerebro predict`, the REPL's
// predict): what a model file needs besides its weights travels with it as
// "model info" (the task, the example shape, the features' normalisation,
// class or target names, the CSV feature columns), kept in the run directory
// (model_info.json) and inside every exported model file (the TorchScript
// archive's extra file cerebro/model_info.json).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/manifest.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::models {

inline constexpr const char* kModelInfoFile = "model_info.json";

// {"task", "sample_shape", "num_classes", "class_names", "feature_names",
//  "normalization": {"mode", "mean", "stddev"}, "target_mean", "target_stddev"}
// and, for a run on images, "images": {"channels", "height", "width", "resize"}.
nlohmann::json model_info(const datasets::Manifest& manifest);

// Stores `info` inside the TorchScript file at `path` (rewritten in place, atomically).
Status attach_model_info(const std::string& path, const nlohmann::json& info);

// The model info of a model file: from inside it, else from model_info.json
// beside it (a run directory's best_model.pt). Errors name the file.
Result<nlohmann::json> read_model_info(const std::string& model_path);

// Runs the model at `model_path` over `data_path` and writes one CSV row per
// example to `out_path` (atomically). DATA: a CSV file with the training
// features' columns (a label column is ignored), IDX images (a
// *-images-idx3-ubyte[.gz] file, or a directory in the MNIST layout: its
// t10k images), or images: one PNG/JPEG file or a folder of them (flat, or
// <class>/*.png|jpg one level down), decoded as the run decoded its images
// (the info's "images": size, channels, resize) and normalised the same way.
// Columns: classification `row,class,p_<class>...`; regression
// `row,<target>...` (in the targets' units); multilabel
// `row,labels,p_<label>...` (labels: `;`-separated, probability > 0.5); for
// images a `path` column follows `row`. Captioning (images only):
// `row,path,caption`, the caption in words (the tokenizer travels in the
// model info) by beam search over `beam` hypotheses (1: greedy); detection (images only): one row per box
// `row,path,class,score,x,y,width,height`, or when `out_path` ends in .json
// a COCO results file (models/detections.hpp decode_detections; boxes in
// pixels of the image as the model saw it). Returns the number of examples.
Result<int64_t> predict_to_csv(const std::string& model_path, const std::string& data_path, const std::string& out_path,
                               int64_t beam = 1);

// Continues `prompt` by `tokens` tokens with the language model at `model_path` (its tokenizer travels in
// the model info) and returns the prompt and its continuation as text. Each step feeds the last window of
// ids (the run's [data] window) and takes the most likely next token, or with `temperature` > 0 samples
// from the logits divided by it (drawn from `seed`); the special ids are never chosen. Errors name the
// file: not a language model, an empty prompt.
Result<std::string> generate_text(const std::string& model_path, const std::string& prompt, int64_t tokens,
                                  double temperature = 0, uint64_t seed = 1);

}  // namespace cerebro::models
