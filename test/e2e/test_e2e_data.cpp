// The data features (images, the prepared cache, out-of-core shards) end to
// end through the real `cerebro` executable:
// an image-folder experiment (Fashion-MNIST written out as PNG files by the
// test) with augmentation, replayed bit-exact; a worker fault on images; the
// shared prepared-data cache reused by a second run and bypassed by a changed
// parameter or file; bad image input; `cerebro predict` over image folders and
// IDX files with the image run's model (and its errors); and a partition
// several times larger than the memory budget trained out of core with
// anonymous memory in budget.
#define BOOST_TEST_MODULE e2e_data
#include <boost/test/unit_test.hpp>

#include <stb/stb_image_write.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "datasets/idx.hpp"
#include "datasets/manifest.hpp"
#include "test/support/faults_util.hpp"
#include "tools/child_process.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

const char* const kClasses[] = {"tshirt", "trouser", "pullover", "dress", "coat",
                                "sandal", "shirt",   "sneaker",  "bag",   "boot"};

// The first `train` and `test` Fashion-MNIST images as PNG files in class folders.
void write_fashion_pngs(const fs::path& root, int train, int test) {
  auto write = [&](const std::string& images, const std::string& labels, const char* split, int n) {
    auto data =
        datasets::load_idx(std::string(fashion_mnist) + "/" + images, std::string(fashion_mnist) + "/" + labels);
    BOOST_REQUIRE_MESSAGE(data.ok(), data.status().message());
    std::vector<unsigned char> pixels(28 * 28);
    for (int i = 0; i < n; ++i) {
      for (int p = 0; p < 28 * 28; ++p)
        pixels[p] = static_cast<unsigned char>(data->features[i * 784 + p] * 255.0f + 0.5f);
      const fs::path file = root / split / kClasses[data->labels[i]] / (std::to_string(i) + ".png");
      fs::create_directories(file.parent_path());
      BOOST_REQUIRE(stbi_write_png(file.c_str(), 28, 28, 1, pixels.data(), 28));
    }
  };
  write("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "train", train);
  write("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "test", test);
}

// MOP only: under auto the last units may train as a gang when the timings
// say so (under load they did), and a replay trains MOP, so it would differ.
std::string image_spec(const std::string& root, const std::string& extra = "", int seed = 11) {
  return "[experiment]\nname = \"images\"\nepochs = 2\nseed = " + std::to_string(seed) +
         "\n[data]\nsource = \"images\"\npath = \"" + root + "\"\nimage_size = 28\npartitions = 2\n" +
         "augment = [\"random_crop\", \"hflip\"]\ncrop_padding = 2\n" + extra +
         "[cluster]\nworkers = 2\nparallelism = \"mop\"\n[space]\nmodel = [\"mlp\"]\nlr = [1e-3, 3e-3]\nbatch_size = "
         "[32]\n";
}

// The environment prefix that points the prepared-data cache at `dir`.
std::string cache_env(const TempDir& tmp) { return "CEREBRO_CACHE_DIR=" + tmp.file("cache") + " "; }

int cache_entries(const TempDir& tmp) {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(tmp.file("cache"), ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

Output cerebro_in(const TempDir& tmp, const std::string& args, const std::string& env = "") {
  return run_command(cache_env(tmp) + env + cerebro_binary() + " " + args);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells(1);
  for (char c : line) {
    if (c == ',')
      cells.emplace_back();
    else
      cells.back().push_back(c);
  }
  return cells;
}

void write_gray_png(const fs::path& file, int side) {
  fs::create_directories(file.parent_path());
  std::vector<unsigned char> pixels(static_cast<size_t>(side * side), 90);
  BOOST_REQUIRE(stbi_write_png(file.c_str(), side, side, 1, pixels.data(), side));
}

// `cerebro predict` with the image run's best model: over its test folder (root/test/<class>/*.png, one
// row per image with its path, classed like its folder more often than not), over a flat folder holding an
// image of another size (the run resized, so predict does), over IDX files (Fashion-MNIST's t10k), and
// over a folder without images (an error naming it, nothing written).
void predict_with_an_image_model(const TempDir& tmp, const fs::path& root, const std::string& run) {
  const std::string model = run + "/best_model.pt";
  const std::string by_folder = tmp.file("by-folder.csv");
  auto out = cerebro_in(tmp, "predict " + model + " " + (root / "test").string() + " --out " + by_folder);
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  BOOST_TEST(out.text.find("wrote 200 predictions") != std::string::npos, out.text);
  auto rows = lines_of(by_folder);
  BOOST_REQUIRE_EQUAL(rows.size(), 201u);
  BOOST_TEST(rows[0] ==
             "row,path,class,p_bag,p_boot,p_coat,p_dress,p_pullover,p_sandal,p_shirt,p_sneaker,p_trouser,p_tshirt");
  int right = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto cells = cells_of(rows[i]);
    BOOST_REQUIRE_EQUAL(cells.size(), 13u);
    BOOST_TEST(cells[0] == std::to_string(i - 1));
    BOOST_TEST(fs::exists(cells[1]), cells[1]);
    right += fs::path(cells[1]).parent_path().filename() == cells[2];
  }
  BOOST_TEST_MESSAGE("predict over the test folder: " << right << " of 200 in their folder's class");
  BOOST_TEST(right > 100);

  const fs::path flat = tmp.path() / "flat";
  fs::create_directories(flat);
  fs::copy_file(*fs::directory_iterator(root / "test" / "bag"), flat / "a.png");
  write_gray_png(flat / "b-30x30.png", 30);
  out = cerebro_in(tmp, "predict " + model + " " + flat.string() + " --out " + tmp.file("flat.csv"));
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  rows = lines_of(tmp.file("flat.csv"));
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  BOOST_TEST(cells_of(rows[1])[1] == (flat / "a.png").string());
  BOOST_TEST(cells_of(rows[2])[1] == (flat / "b-30x30.png").string());

  out = cerebro_in(tmp, "predict " + model + " " + std::string(fashion_mnist) + " --out " + tmp.file("idx.csv"));
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  rows = lines_of(tmp.file("idx.csv"));
  BOOST_REQUIRE_EQUAL(rows.size(), 10001u);
  BOOST_TEST(rows[0].rfind("row,class,p_bag,", 0) == 0u, rows[0]);
  auto t10k = datasets::load_idx(std::string(fashion_mnist) + "/t10k-images-idx3-ubyte.gz",
                                 std::string(fashion_mnist) + "/t10k-labels-idx1-ubyte.gz");
  BOOST_REQUIRE(t10k.ok());
  int idx_right = 0;
  for (size_t i = 1; i < rows.size(); ++i) idx_right += cells_of(rows[i])[1] == kClasses[t10k->labels[i - 1]];
  BOOST_TEST_MESSAGE("predict over Fashion-MNIST's t10k IDX files: " << idx_right << " of 10000 right");
  BOOST_TEST(idx_right > 5000);

  const fs::path empty = tmp.path() / "no-images";
  fs::create_directories(empty / "bag");
  std::ofstream(empty / "notes.txt") << "not an image";
  out = cerebro_in(tmp, "predict " + model + " " + empty.string() + " --out " + tmp.file("none.csv"));
  BOOST_TEST(out.exit_code != 0, out.text);
  BOOST_TEST(out.text.find(empty.string() + ": the folder holds no images") != std::string::npos, out.text);
  BOOST_TEST(!fs::exists(tmp.file("none.csv")));
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_image_folder_experiment_trains_replays_bit_exact_and_its_prepared_data_is_reused) {
  TempDir tmp;
  const fs::path root = tmp.path() / "fashion";
  write_fashion_pngs(root, 1000, 200);
  const auto spec = tmp.write("images.toml", image_spec(root.string()));
  auto first = cerebro_in(tmp, "run " + spec + " --out " + tmp.file("run1"));
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.text);
  BOOST_TEST(first.text.find("prepared into the cache") != std::string::npos, first.text);
  auto summary = read_json(tmp.file("run1/summary.json"));
  BOOST_TEST_MESSAGE("image folder, best config's test_accuracy " << summary["best"]["test_accuracy"]);
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.5, summary.dump());
  predict_with_an_image_model(tmp, root, tmp.file("run1"));

  // Replay: the same crops and flips, drawn from the units' seeds.
  auto replay = cerebro_in(tmp, "run --replay " + tmp.file("run1") + " --out " + tmp.file("replay"));
  BOOST_TEST(replay.exit_code == 0, replay.text);
  BOOST_TEST(replay.text.find("reproduced the metrics of all 2 configs exactly") != std::string::npos, replay.text);

  // A second experiment on the same data: no preparation, no second copy.
  auto second = cerebro_in(tmp, "run " + spec + " --out " + tmp.file("run2"));
  BOOST_REQUIRE_MESSAGE(second.exit_code == 0, second.text);
  BOOST_TEST(second.text.find("found in the cache: ") != std::string::npos, second.text);
  BOOST_TEST(second.text.find("prepared into the cache") == std::string::npos, second.text);
  BOOST_TEST(fs::is_symlink(tmp.file("run2/data")));
  BOOST_TEST(fs::read_symlink(tmp.file("run2/data")) == fs::read_symlink(tmp.file("run1/data")));
  BOOST_TEST(cache_entries(tmp) == 1);

  // A changed preparation parameter, then a changed source file: each prepares its own entry.
  auto reseeded = cerebro_in(tmp, "prepare " + tmp.write("seed.toml", image_spec(root.string(), "", 12)));
  BOOST_TEST(reseeded.exit_code == 0, reseeded.text);
  BOOST_TEST(reseeded.text.find("prepared 2 partitions") != std::string::npos, reseeded.text);
  BOOST_TEST(cache_entries(tmp) == 2);
  const fs::path some_image = *fs::directory_iterator(root / "train" / "bag");
  fs::copy_file(*fs::directory_iterator(root / "train" / "boot"), some_image, fs::copy_options::overwrite_existing);
  auto edited = cerebro_in(tmp, "prepare " + spec);
  BOOST_TEST(edited.text.find("prepared 2 partitions") != std::string::npos, edited.text);
  BOOST_TEST(cache_entries(tmp) == 3);
  auto listed = cerebro_in(tmp, "cache list");
  BOOST_TEST(listed.exit_code == 0, listed.text);
  BOOST_TEST(listed.text.find("3 entries") != std::string::npos, listed.text);
}

// Also: the run does not resize (resize = false), so neither does predict: an image of another size is an
// error naming it, and no predictions are written.
BOOST_AUTO_TEST_CASE(a_worker_lost_on_image_data_has_its_unit_rerun_and_the_run_completes) {
  TempDir tmp;
  const fs::path root = tmp.path() / "fashion";
  write_fashion_pngs(root, 300, 50);
  const auto spec = tmp.write("images.toml", image_spec(root.string(), "resize = false\n"));
  auto out = cerebro_in(tmp, "run " + spec + " --out " + tmp.file("run"), faults::with_faults("worker_exit=1:1:0"));
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, out.text);
  auto store = faults::open_store(tmp.file("run"));
  faults::check_complete_run(store->unit_log(), 2, 2, 2);

  const fs::path folder = tmp.path() / "new";
  fs::create_directories(folder / "bag");
  fs::copy_file(*fs::directory_iterator(root / "test" / "bag"), folder / "bag" / "a.png");
  write_gray_png(folder / "bag" / "b.png", 30);
  auto predicted = cerebro_in(tmp, "predict " + tmp.file("run/best_model.pt") + " " + folder.string() + " --out " +
                                       tmp.file("predictions.csv"));
  BOOST_TEST(predicted.exit_code != 0, predicted.text);
  BOOST_TEST(predicted.text.find((folder / "bag" / "b.png").string() +
                                 ": the image is 30x30 (height x width), expected 28x28; the run did not resize") !=
                 std::string::npos,
             predicted.text);
  BOOST_TEST(!fs::exists(tmp.file("predictions.csv")));
}

BOOST_AUTO_TEST_CASE(bad_image_input_is_a_clear_error_naming_the_file_or_folder_and_leaves_nothing) {
  TempDir tmp;
  const fs::path root = tmp.path() / "fashion";
  write_fashion_pngs(root, 60, 0);
  auto expect_failure = [&](const std::string& extra, const std::string& message) {
    const auto spec = tmp.write("bad.toml", image_spec(root.string(), extra));
    auto out = cerebro_in(tmp, "run " + spec + " --out " + tmp.file("run"));
    BOOST_TEST(out.exit_code != 0, out.text);
    BOOST_TEST(out.text.find(message) != std::string::npos, out.text);
    BOOST_TEST(!fs::exists(tmp.file("run")));
    BOOST_TEST(cache_entries(tmp) == 0);  // nothing half-prepared
  };
  const fs::path big = root / "train" / "bag" / "big.png";
  std::vector<unsigned char> pixels(30 * 30, 9);
  BOOST_REQUIRE(stbi_write_png(big.c_str(), 30, 30, 1, pixels.data(), 30));
  expect_failure("resize = false\n", big.string() + ": the image is 30x30 (height x width), expected 28x28");
  fs::remove(big);
  fs::create_directories(root / "train" / "extra");
  expect_failure("", (root / "train" / "extra").string() + ": class folder holds no images");
  fs::remove(root / "train" / "extra");
  const fs::path broken = *fs::directory_iterator(root / "train" / "coat");
  std::ofstream(broken, std::ios::trunc) << "\x89PNG\r\n\x1a\nnot really";
  expect_failure("", broken.string() + ": cannot decode the image");
}

// Anonymous RSS (/proc/PID/status RssAnon), polled until the process exits.
int64_t peak_rss_anon_kb(ChildProcess& child, int& exit_code) {
  int64_t peak = 0;
  const std::string status = "/proc/" + std::to_string(child.pid()) + "/status";
  for (;;) {
    std::ifstream in(status);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("RssAnon:", 0) == 0) peak = std::max<int64_t>(peak, std::stoll(line.substr(8)));
    exit_code = child.wait_exit(0.02);
    if (exit_code != -1) return peak;
  }
}

BOOST_AUTO_TEST_CASE(a_partition_several_times_the_memory_budget_trains_with_anonymous_memory_in_budget) {
  TempDir tmp;
  // Synthetic 56x56 images: 16000 of them are 200 MB of float features.
  const int n = 16000, side = 56;
  auto write_idx = [&](const std::string& name, int count) {
    std::vector<unsigned char> images, labels;
    auto be32 = [](std::vector<unsigned char>& out, uint32_t v) {
      for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<unsigned char>(v >> s));
    };
    be32(images, 0x803), be32(images, count), be32(images, side), be32(images, side);
    be32(labels, 0x801), be32(labels, count);
    for (int i = 0; i < count; ++i) {
      for (int p = 0; p < side * side; ++p)
        images.push_back(static_cast<unsigned char>((i % 10) * 20 + (p * 7 + i) % 40));
      labels.push_back(static_cast<unsigned char>(i % 10));
    }
    std::ofstream(tmp.file(name + "-images-idx3-ubyte"), std::ios::binary)
        .write(reinterpret_cast<char*>(images.data()), images.size());
    std::ofstream(tmp.file(name + "-labels-idx1-ubyte"), std::ios::binary)
        .write(reinterpret_cast<char*>(labels.data()), labels.size());
  };
  write_idx("train", n);
  write_idx("t10k", 500);
  constexpr int kBudgetMb = 24;
  auto spec_with = [&](const std::string& name, int limit) {
    return tmp.write(name + ".toml",
                     "[experiment]\nepochs = 1\n[data]\nsource = \"idx\"\npath = \"" + tmp.path().string() +
                         "\"\nvalidation_fraction = 0.05\npartitions = 1\nlimit = " + std::to_string(limit) +
                         "\n[cluster]\nworkers = 1\nmemory_mb = " + std::to_string(kBudgetMb) +
                         "\n[space]\nmodel = [\"mlp\"]\nhidden = [[32]]\nbatch_size = [128]\n");
  };
  // Prepared beforehand (the preparation's own memory is not the worker's).
  const auto big = spec_with("big", n), small = spec_with("small", 400);
  for (const auto& spec : {big, small}) {
    auto prepared = cerebro_in(tmp, "prepare " + spec);
    BOOST_REQUIRE_MESSAGE(prepared.exit_code == 0, prepared.text);
  }
  auto measure = [&](const std::string& spec, const std::string& out) {
    ChildProcess child(
        {"/usr/bin/env", "CEREBRO_CACHE_DIR=" + tmp.file("cache"), cerebro_binary(), "run", spec, "--out", out},
        out + ".log");
    int exit_code = -1;
    const int64_t peak = peak_rss_anon_kb(child, exit_code);
    BOOST_REQUIRE_MESSAGE(exit_code == 0, child.log());
    return peak;
  };
  const int64_t small_peak = measure(small, tmp.file("small"));
  const int64_t big_peak = measure(big, tmp.file("big"));
  auto manifest = datasets::read_manifest(tmp.file("big/data"));
  BOOST_REQUIRE(manifest.ok());
  const int64_t partition_kb = manifest->partitions.at(0).bytes / 1024;
  BOOST_TEST_MESSAGE("peak RssAnon " << big_peak << " kB training a partition of " << partition_kb << " kB, "
                                     << small_peak << " kB for a tiny one");
  BOOST_TEST(partition_kb > 6 * kBudgetMb * 1024);  // several times the budget
  // Training the big partition takes at most the budget more anonymous
  // memory than training a tiny one (the runtime, model and optimizer).
  BOOST_TEST(big_peak <= small_peak + kBudgetMb * 1024 + 16 * 1024,
             "peak RssAnon " << big_peak << " kB vs " << small_peak << " kB for a tiny partition; budget " << kBudgetMb
                             << " MB, partition " << partition_kb << " kB");
}
