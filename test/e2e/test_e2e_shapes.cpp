// Captioning and detection end to end through the real `cerebro` executable, over a small set of
// coloured shapes in COCO form (tools/make_shapes): the zoo's captioner and detector trained under MOP,
// ranked by val_bleu4 and val_map and scored on the test images; killed after a commit a run resumes; a
// replay reproduces every metric; predict, with a beam too, and the REPL's predict write captions and boxes.
#define BOOST_TEST_MODULE shapes
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;

namespace {

constexpr int kEpochs = 5;

// 400 images of 16x16 pixels, with their captions and boxes.
std::string make_shapes(const TempDir& tmp) {
  auto made = run_command(std::string(CEREBRO_SOURCE_DIR) + "/tools/make_shapes --out " + tmp.file("shapes") +
                          " --images 400 --size 16");
  BOOST_TEST_INFO(made.text);
  BOOST_REQUIRE_EQUAL(made.exit_code, 0);
  return tmp.file("shapes");
}

// The shapes, written once per test.
std::string shapes_dir(const TempDir& tmp) {
  return std::filesystem::exists(tmp.file("shapes")) ? tmp.file("shapes") : make_shapes(tmp);
}

// Two configs of `model` (its own [space] lines in `space`) over the shapes' `annotations`.
std::string shapes_spec(const TempDir& tmp, const std::string& task, const std::string& annotations,
                        const std::string& space, int epochs = kEpochs) {
  return tmp.write(task + ".toml", "[experiment]\ntask = \"" + task + "\"\nepochs = " + std::to_string(epochs) +
                                       "\nseed = 3\n"
                                       "[data]\nsource = \"coco\"\npath = \"" +
                                       shapes_dir(tmp) + "\"\nannotations = \"" + annotations +
                                       "\"\nimage_root = \"images\"\ncolor = \"rgb\"\n"
                                       "validation_fraction = 0.15\ntest_fraction = 0.15\npartitions = 2\n"
                                       "[cluster]\nworkers = 2\n[space]\n" +
                                       space + "lr = [0.003, 0.01]\nbatch_size = [16]\n");
}

// Crashed after five commits, resumed, complete; the summary ranks by `metric` and holds `epoch_keys` per
// epoch and `best_keys` for the best config; a replay reproduces every metric. Returns the summary.
nlohmann::json train_resume_and_replay(const TempDir& tmp, const std::string& spec, const std::string& metric,
                                       std::vector<std::string> epoch_keys, std::vector<std::string> best_keys) {
  auto run = tmp.file("run");
  auto first = run_command(with_faults("crash=after_commit:5") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  BOOST_REQUIRE_EQUAL(commits_in(open_store(run)->unit_log()), 5u);
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  check_complete_run(open_store(run)->unit_log(), 2, 2, kEpochs);

  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["metric"] == metric);
  for (const auto& config : summary["configs"]) {
    BOOST_REQUIRE_EQUAL(config["epochs"].size(), static_cast<size_t>(kEpochs));
    for (const auto& epoch : config["epochs"]) {
      for (const auto& key : epoch_keys) BOOST_TEST(epoch.contains(key), key);
      BOOST_TEST(!epoch.contains("val_accuracy"));
    }
    const auto& epochs = config["epochs"];
    BOOST_TEST(epochs[kEpochs - 1]["val_loss"].get<double>() < epochs[0]["val_loss"].get<double>());
  }
  // Higher is better: the best config's score is the highest of the board.
  const auto& best = summary["best"];
  for (const auto& config : summary["configs"])
    BOOST_TEST(best[metric].get<double>() >= config["metric"].get<double>());
  for (const auto& key : best_keys) BOOST_TEST(best.contains(key), key);
  BOOST_TEST(std::filesystem::exists(run + "/best_model.pt"));

  auto replay = run_cerebro("run --replay " + run + " --out " + tmp.file("replay"));
  BOOST_TEST_INFO(replay.text);
  BOOST_REQUIRE_EQUAL(replay.exit_code, 0);
  BOOST_TEST(replay.text.find("replay reproduced the metrics of all 2 configs exactly") != std::string::npos);
  return summary;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_captioner_learns_the_shapes_resumes_and_replays_exactly) {
  TempDir tmp;
  const auto spec = shapes_spec(tmp, "captioning", "captions.json",
                                "model = [\"captioner\"]\nchannels = [[16, 32]]\nlayers = [1]\nd_model = [32]\n"
                                "heads = [2]\nff = [64]\n");
  auto summary = train_resume_and_replay(tmp, spec, "val_bleu4", {"val_loss", "val_token_accuracy", "val_bleu4"},
                                         {"test_bleu4", "test_token_accuracy", "test_loss"});
  // Five epochs over 280 images already name shapes and colours in order (0.32 when written; a guess
  // scores 0).
  BOOST_TEST(summary["best"]["test_bleu4"].get<double>() > 0.15);
  // The report and the dashboard show the best config's captions of the first test images.
  const auto& examples = summary["best"]["examples"];
  BOOST_REQUIRE_EQUAL(examples.size(), 6u);
  for (const auto& e : examples) {
    BOOST_TEST(e["image"].get<std::string>().rfind("data:image/png;base64,", 0) == 0);
    BOOST_TEST(e.contains("caption"));
    BOOST_TEST(e["references"].size() == 2u);  // make_shapes writes two captions per image
  }

  // The best model captions image files in words: its vocabulary travels inside it.
  auto predicted = run_cerebro("predict " + tmp.file("run") + "/best_model.pt " + tmp.file("shapes") +
                               "/images --out " + tmp.file("captions.csv"));
  BOOST_TEST_INFO(predicted.text);
  BOOST_REQUIRE_EQUAL(predicted.exit_code, 0);
  std::ifstream csv(tmp.file("captions.csv"));
  std::string line;
  std::getline(csv, line);
  BOOST_TEST(line == "row,path,caption");
  int rows = 0, naming_a_shape = 0;
  while (std::getline(csv, line)) {
    ++rows;
    for (const char* shape : {"square", "circle", "triangle"})
      if (line.find(shape) != std::string::npos) {
        ++naming_a_shape;
        break;
      }
  }
  BOOST_TEST(rows == 400);
  BOOST_TEST(naming_a_shape > 200);

  // A beam search over three captions per image writes the same columns and rows.
  auto beamed = run_cerebro("predict " + tmp.file("run") + "/best_model.pt " + tmp.file("shapes") +
                            "/images --beam 3 --out " + tmp.file("beamed.csv"));
  BOOST_TEST_INFO(beamed.text);
  BOOST_REQUIRE_EQUAL(beamed.exit_code, 0);
  BOOST_TEST(beamed.text.find("wrote 400 predictions") != std::string::npos);
  auto wrong = run_cerebro("predict " + tmp.file("run") + "/best_model.pt " + tmp.file("shapes") +
                           "/images --beam 0 --out " + tmp.file("wrong.csv"));
  BOOST_TEST(wrong.exit_code != 0);
  BOOST_TEST(!std::filesystem::exists(tmp.file("wrong.csv")));
}

BOOST_AUTO_TEST_CASE(a_detector_learns_the_shapes_resumes_and_replays_exactly) {
  TempDir tmp;
  const auto spec =
      shapes_spec(tmp, "detection", "instances.json", "model = [\"detector\"]\nchannels = [[16, 32]]\nhead = [32]\n");
  auto summary = train_resume_and_replay(tmp, spec, "val_map", {"val_loss", "val_map", "val_map50"},
                                         {"test_map", "test_map50", "test_loss"});
  // 0.32 when written; boxes at random score near 0.
  BOOST_TEST(summary["best"]["test_map50"].get<double>() > 0.15);
  // The report and the dashboard show the best config's boxes on the first test images.
  const auto& examples = summary["best"]["examples"];
  BOOST_REQUIRE_EQUAL(examples.size(), 6u);
  for (const auto& e : examples) {
    BOOST_TEST(e["truth"].size() >= 1u);
    for (const auto& box : e["boxes"]) BOOST_TEST(box["score"].get<double>() >= 0.3);
  }

  // A COCO results file: each box names its image by row + 1 and its class by the category id.
  auto predicted = run_cerebro("predict " + tmp.file("run") + "/best_model.pt " + tmp.file("shapes") +
                               "/images --out " + tmp.file("results.json"));
  BOOST_TEST_INFO(predicted.text);
  BOOST_REQUIRE_EQUAL(predicted.exit_code, 0);
  auto results = read_json(tmp.file("results.json"));
  BOOST_REQUIRE(results.is_array());
  BOOST_TEST(results.size() >= 400u);
  for (const auto& r : results) {
    BOOST_TEST((r["image_id"].get<int>() >= 1 && r["image_id"].get<int>() <= 400));
    BOOST_TEST((r["category_id"].get<int>() >= 1 && r["category_id"].get<int>() <= 3));
    BOOST_TEST(r["bbox"].size() == 4u);
    BOOST_TEST((r["score"].get<double>() > 0 && r["score"].get<double>() <= 1));
  }
}

// The REPL predicts with a config of the experiment it drives, for captions and boxes as for labels: the
// config's model comes over with its vocabulary and category ids inside it.
BOOST_AUTO_TEST_CASE(the_repl_predicts_captions_and_boxes_with_a_config) {
  TempDir tmp;
  const auto captioning = shapes_spec(tmp, "captioning", "captions.json",
                                      "model = [\"captioner\"]\nchannels = [[16]]\nlayers = [1]\nd_model = [16]\n"
                                      "heads = [2]\nff = [32]\n",
                                      1);
  const auto detection =
      shapes_spec(tmp, "detection", "instances.json", "model = [\"detector\"]\nchannels = [[16]]\nhead = [16]\n", 1);
  const auto images = tmp.file("shapes") + "/images";
  auto script = tmp.write("script.txt", "submit " + captioning + "\nwait\npredict 1 " + images + " " +
                                            tmp.file("captions.csv") + "\nsubmit " + detection + "\nwait\npredict 0 " +
                                            images + " " + tmp.file("boxes.json") + "\nquit\n");
  auto out = run_command(cerebro_binary() + " repl --workers 2 --state " + tmp.file("state") + " < " + script);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("wrote 400 predictions of config 1 to " + tmp.file("captions.csv")) != std::string::npos);
  BOOST_TEST(out.text.find("wrote 400 predictions of config 0 to " + tmp.file("boxes.json")) != std::string::npos);
  std::ifstream csv(tmp.file("captions.csv"));
  std::string header;
  std::getline(csv, header);
  BOOST_TEST(header == "row,path,caption");
  auto boxes = read_json(tmp.file("boxes.json"));
  BOOST_REQUIRE(boxes.is_array());
  for (const auto& box : boxes) BOOST_TEST((box["category_id"].get<int>() >= 1 && box["category_id"].get<int>() <= 3));
  // The exported model files are the REPL's to remove.
  BOOST_TEST(!std::filesystem::exists(tmp.file("captions.csv") + ".model.pt"));
}
