// `cerebro predict MODEL.pt DATA --out predictions.csv`: a trained model over a
// CSV file, IDX images or an image folder, one row per example (models/predict.hpp).
#include <memory>

#include <fmt/format.h>

#include "models/predict.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct PredictOptions {
  std::string model_path, data_path, out_path;
  int64_t beam = 1;
};

int predict(const PredictOptions& o) {
  auto rows = models::predict_to_csv(o.model_path, o.data_path, o.out_path, o.beam);
  if (!rows.ok()) return fail(rows.error());
  fmt::print("wrote {} predictions to {}\n", *rows, o.out_path);
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<PredictOptions>();
  command.add_option("model", o->model_path, "A run's best_model.pt or an exported config (TorchScript)")->required();
  command
      .add_option("data", o->data_path,
                  "A CSV with the training features' columns (a label column is ignored), an IDX images file, "
                  "a directory of IDX files (its t10k images), or images: a PNG/JPEG file or a folder of them "
                  "(flat or <class>/*.png|jpg), decoded as the run decoded its images")
      ->required();
  command.add_option("--out", o->out_path, "The predictions CSV to write")->required();
  command
      .add_option("--beam", o->beam, "Captioning: hypotheses per image in the beam search of its caption (1: greedy)")
      ->check(CLI::Range(1, 16))
      ->default_val(1);
  return [o] { return predict(*o); };
}

const CommandRegistrar registrar{
    {"predict", "Run a trained model over a CSV, IDX or image data set and write one prediction per example", 65,
     setup}};

}  // namespace

}  // namespace cerebro::cli
