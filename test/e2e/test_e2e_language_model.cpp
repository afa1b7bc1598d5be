// Language modelling end to end through the real `cerebro` executable: the licence texts every Debian
// system ships (/usr/share/common-licenses) as token windows, the zoo's transformer trained under MOP,
// ranked by val_perplexity and scored on the test windows; killed after a commit it resumes; a replay
// reproduces every metric; a context longer than the window fails its configs naming both.
#define BOOST_TEST_MODULE language_model
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;

namespace {

// Configs of a small transformer (two learning rates unless `lrs` says otherwise) over windows of 33 word
// pieces; the extra text goes into [cluster] and [space].
std::string lm_spec(const TempDir& tmp, const std::string& name, const std::string& space_extra = "",
                    const std::string& cluster_extra = "", const std::string& lrs = "0.003, 0.01") {
  return tmp.write(name + ".toml",
                   "[experiment]\ntask = \"language_model\"\nepochs = 3\nseed = 3\n"
                   "[data]\nsource = \"text\"\npath = \"/usr/share/common-licenses\"\nwindow = 33\n"
                   "min_count = 2\npartitions = 2\n[cluster]\nworkers = 2\n" +
                       cluster_extra +
                       "[space]\nmodel = [\"transformer\"]\nlayers = [1]\nd_model = [32]\nheads = [2]\nff = [64]\n"
                       "lr = [" +
                       lrs + "]\nbatch_size = [32]\n" + space_extra);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_transformer_learns_the_licences_resumes_and_replays_exactly) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto first = run_command(with_faults("crash=after_commit:5") + cerebro_binary() + " run " + lm_spec(tmp, "lm") +
                           " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  BOOST_REQUIRE_EQUAL(commits_in(open_store(run)->unit_log()), 5u);
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  check_complete_run(open_store(run)->unit_log(), 2, 2, 3);

  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["metric"] == "val_perplexity");
  for (const auto& config : summary["configs"]) {
    BOOST_REQUIRE_EQUAL(config["epochs"].size(), 3u);
    for (const auto& epoch : config["epochs"]) {
      for (const char* key : {"val_loss", "val_token_accuracy", "val_perplexity"}) BOOST_TEST(epoch.contains(key), key);
      BOOST_TEST(!epoch.contains("val_accuracy"));
    }
    // The next-token loss falls as it trains, and the perplexity with it.
    const auto& epochs = config["epochs"];
    BOOST_TEST(epochs[2]["val_perplexity"].get<double>() < epochs[0]["val_perplexity"].get<double>());
  }
  const auto& best = summary["best"];
  // Lower is better: the best config's perplexity is the lowest of the board.
  for (const auto& config : summary["configs"])
    BOOST_TEST(best["val_perplexity"].get<double>() <= config["metric"].get<double>());
  for (const char* key : {"test_perplexity", "test_token_accuracy", "test_loss"}) BOOST_TEST(best.contains(key), key);
  // Far below a guess among the vocabulary's words (about 1,700 with min_count 2), and a real fraction
  // of the next words right.
  const double perplexity = best["test_perplexity"].get<double>();
  BOOST_TEST(std::isfinite(perplexity));
  BOOST_TEST(perplexity < 400.0);
  BOOST_TEST(best["test_token_accuracy"].get<double>() > 0.1);
  // val_loss is the batches' mean token cross-entropy, so near log(perplexity).
  BOOST_TEST(std::abs(std::log(best["val_perplexity"].get<double>()) - best["val_loss"].get<double>()) < 0.2);

  auto replay = run_cerebro("run --replay " + run + " --out " + tmp.file("replay"));
  BOOST_TEST_INFO(replay.text);
  BOOST_REQUIRE_EQUAL(replay.exit_code, 0);
  BOOST_TEST(replay.text.find("replay reproduced the metrics of all 2 configs exactly") != std::string::npos);

  // The best model continues a text in words: its vocabulary travels inside it.
  auto generated = run_cerebro("generate " + run + "/best_model.pt --prompt \"the software\" --tokens 6");
  BOOST_TEST_INFO(generated.text);
  BOOST_REQUIRE_EQUAL(generated.exit_code, 0);
  BOOST_TEST(generated.text.rfind("the software ", 0) == 0);
  BOOST_TEST(std::count(generated.text.begin(), generated.text.end(), ' ') >= 7);
  auto sampled = run_cerebro("generate " + run + "/best_model.pt --prompt \"the software\" --tokens 6 --temperature 1");
  BOOST_TEST(sampled.exit_code == 0);
  auto empty = run_cerebro("generate " + run + "/best_model.pt --prompt \"\" --tokens 3");
  BOOST_TEST(empty.exit_code != 0);
  BOOST_TEST(empty.text.find("the prompt holds no token") != std::string::npos, empty.text);
}

// As any config that does not fit the data: it fails its pilot check, naming both lengths, and trains nothing.
BOOST_AUTO_TEST_CASE(a_context_longer_than_the_window_fails_its_configs_naming_both) {
  TempDir tmp;
  auto out = run_cerebro("run " + lm_spec(tmp, "long", "context = [64]\n") + " --out " + tmp.file("run"));
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.text.find("failed its pilot check: pilot check failed: transformer: context 64 exceeds the "
                           "data's window of 33 tokens ([data] window)") != std::string::npos);
  auto summary = read_json(tmp.file("run") + "/summary.json");
  for (const auto& config : summary["configs"]) BOOST_TEST(config["status"] == "failed");
}

// A lone config leaves a worker idle under MOP: as a data-parallel gang it trains on both workers at once,
// each epoch one gang over the two partitions, and learns as it does alone.
BOOST_AUTO_TEST_CASE(a_lone_transformer_trains_as_a_gang_of_the_idle_workers) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + lm_spec(tmp, "gang", "", "parallelism = \"data\"\n", "0.01") + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  check_complete_run(open_store(run)->unit_log(), 1, 2, 3);
  for (const auto& e : open_store(run)->unit_log()) BOOST_TEST(e.gang_size == 2);
  auto summary = read_json(run + "/summary.json");
  const auto& config = summary["configs"][0];
  BOOST_TEST(config["training"]["gangs"]["2"] == 3);  // one gang per epoch
  BOOST_TEST(config["training"]["units_alone"] == 0);
  const auto& epochs = config["epochs"];
  BOOST_REQUIRE_EQUAL(epochs.size(), 3u);
  BOOST_TEST(epochs[2]["val_perplexity"].get<double>() < epochs[0]["val_perplexity"].get<double>());
  BOOST_TEST(summary["best"]["test_perplexity"].get<double>() < 400.0);
}

// A transformer whose training state (about 2 MB here: the embedding and the head of a vocabulary of some
// 1,700 words) exceeds [cluster] model_memory_mb trains as pipeline stages and learns as it does whole.
BOOST_AUTO_TEST_CASE(a_transformer_over_the_model_memory_trains_as_pipeline_stages) {
  TempDir tmp;
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + lm_spec(tmp, "staged", "", "model_memory_mb = 1\n", "0.01") + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("trains as a pipeline over ") != std::string::npos);
  auto summary = read_json(run + "/summary.json");
  const auto& config = summary["configs"][0];
  BOOST_TEST(config["training"]["pipeline"].get<std::string>().rfind("pipeline over ", 0) == 0u, config.dump());
  const auto& epochs = config["epochs"];
  BOOST_REQUIRE_EQUAL(epochs.size(), 3u);
  BOOST_TEST(epochs[2]["val_perplexity"].get<double>() < epochs[0]["val_perplexity"].get<double>());
  BOOST_TEST(summary["best"]["test_perplexity"].get<double>() < 400.0);
}
