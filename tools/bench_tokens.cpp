// `cerebro bench --tokens`: a transformer unit's tokens per second against a plain LibTorch loop over
// the same model and batches (models/token_throughput.hpp), as interleaved pairs on one thread.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "datasets/prepare.hpp"
#include "models/token_throughput.hpp"
#include "tools/bench_modes.hpp"

namespace fs = std::filesystem;

namespace cerebro::bench {

namespace {

// The language model of examples/tasks/text_lm.toml (its first lr): 2 blocks of width 64 over windows of
// 65 words of the licence texts every Debian system ships.
const nlohmann::json kTransformer = {
    {"model", "transformer"}, {"layers", 2}, {"d_model", 64}, {"heads", 4}, {"ff", 256}, {"lr", 0.001},
    {"batch_size", 32}};

// The perplexity of the test windows' scored tokens (positions 1 .. window - 1, pad left out) under the
// training split's word frequencies: the baseline a language model must beat.
double unigram_test_perplexity(const datasets::PreparedData& data) {
  std::map<int64_t, double> counts;
  double total = 0;
  for (const auto& part : data.partitions)
    for (float id : part->features)
      if (id != 0) {
        counts[static_cast<int64_t>(id)] += 1;
        total += 1;
      }
  const auto& test = *data.test;
  const int64_t window = test.sample_shape.at(0);
  double log_sum = 0;
  int64_t scored = 0;
  for (int64_t i = 0; i < test.size(); ++i) {
    for (int64_t t = 1; t < window; ++t) {
      const auto id = static_cast<int64_t>(test.features[static_cast<size_t>(i * window + t)]);
      if (id == 0) continue;
      auto found = counts.find(id);
      // A piece the training split never holds (none with a vocabulary built from it) gets half a count.
      log_sum += std::log((found == counts.end() ? 0.5 : found->second) / total);
      ++scored;
    }
  }
  return scored ? std::exp(-log_sum / static_cast<double>(scored)) : 0.0;
}

}  // namespace

int run_tokens(const ModeOptions& o) {
  datasets::PrepareOptions prepare;
  prepare.source = "text";
  prepare.task = datasets::TaskKind::language_model;
  prepare.text.path = "/usr/share/common-licenses";
  prepare.text.window = 65;
  prepare.tokenizer.min_count = 2;
  prepare.normalization = datasets::NormalizationMode::none;
  prepare.seed = 3;
  const auto data_dir = (fs::path(o.out_dir) / "data").string();
  if (!fs::exists(data_dir)) {
    auto prepared = datasets::prepare(prepare, data_dir);
    if (!prepared.ok()) {
      fmt::print(stderr, "error: {}\n", prepared.error());
      return 1;
    }
  }
  auto data = datasets::load_prepared(data_dir);
  if (!data.ok()) {
    fmt::print(stderr, "error: {}\n", data.error());
    return 1;
  }
  models::ShapeInfo shape{data->manifest.sample_shape, data->manifest.num_classes, datasets::TaskKind::language_model};
  models::configure_threads(1);
  std::vector<double> unit_rate, plain_rate, ratio;
  nlohmann::json pairs = nlohmann::json::array();
  for (int run = 0; run < o.runs; ++run) {
    auto pass =
        models::unit_against_plain_loop(kTransformer, shape, *data->partitions.front(), static_cast<uint64_t>(run + 1));
    if (!pass.ok()) {
      fmt::print(stderr, "error: {}\n", pass.error());
      return 1;
    }
    const double unit = static_cast<double>(pass->tokens) / pass->unit_s;
    const double plain = static_cast<double>(pass->tokens) / pass->plain_s;
    unit_rate.push_back(unit);
    plain_rate.push_back(plain);
    ratio.push_back(unit / plain);
    pairs.push_back({{"tokens", pass->tokens}, {"unit_s", pass->unit_s}, {"plain_s", pass->plain_s}});
    fmt::print(stderr, "pair {}/{}: {} tokens, unit {:.0f} tokens/s, plain loop {:.0f} tokens/s, ratio {:.3f}\n",
               run + 1, o.runs, pass->tokens, unit, plain, unit / plain);
  }
  nlohmann::json report{{"workload",
                         "transformer layers 2, d_model 64, heads 4, ff 256, batch 32, window 65, "
                         "the licence texts (one partition, one thread)"},
                        {"vocabulary", shape.num_classes},
                        {"windows", data->partitions.front()->size()},
                        {"pairs", pairs},
                        {"unit_tokens_per_s_median", median(unit_rate)},
                        {"plain_tokens_per_s_median", median(plain_rate)},
                        {"ratio_median", median(ratio)},
                        {"unigram_test_perplexity", unigram_test_perplexity(*data)}};
  auto text = report.dump(2) + "\n";
  std::ofstream(fs::path(o.out_dir) / "bench_tokens.json") << text;
  if (!o.json_path.empty()) std::ofstream(o.json_path) << text;
  fmt::print("{}", text);
  fmt::print("tokens/s: unit {:.0f}, plain loop {:.0f}, unit/plain median of {} pairs {:.3f}\n", median(unit_rate),
             median(plain_rate), o.runs, median(ratio));
  fmt::print("unigram perplexity of the test tokens (examples/tasks/text_lm.toml's split): {:.1f}\n",
             report["unigram_test_perplexity"].get<double>());
  return 0;
}

}  // namespace cerebro::bench
