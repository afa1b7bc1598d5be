// `cerebro generate MODEL.pt --prompt TEXT --tokens N`: a trained language model continues a text
// (models/predict.hpp generate_text).
#include <memory>

#include <fmt/format.h>

#include "models/predict.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

namespace cerebro::cli {

namespace {

struct GenerateOptions {
  std::string model_path, prompt;
  int64_t tokens = 20;
  double temperature = 0;
  uint64_t seed = 1;
};

int generate(const GenerateOptions& o) {
  auto text = models::generate_text(o.model_path, o.prompt, o.tokens, o.temperature, o.seed);
  if (!text.ok()) return fail(text.error());
  fmt::print("{}\n", *text);
  return 0;
}

CommandAction setup(CLI::App& command) {
  auto o = std::make_shared<GenerateOptions>();
  command.add_option("model", o->model_path, "A language model run's best_model.pt or an exported config")->required();
  command.add_option("--prompt", o->prompt, "The text to continue")->required();
  command.add_option("--tokens", o->tokens, "How many tokens to add (default 20)")->check(CLI::Range(1, 100000));
  command
      .add_option("--temperature", o->temperature,
                  "0 (the default) takes the most likely token each step; above 0 samples from the logits / T")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--seed", o->seed, "The sampling's seed (default 1)");
  return [o] { return generate(*o); };
}

const CommandRegistrar registrar{{"generate", "Continue a text with a trained language model", 66, setup}};

}  // namespace

}  // namespace cerebro::cli
