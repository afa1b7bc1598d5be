#define BOOST_TEST_MODULE end_to_end_bad_input
#include <boost/test/unit_test.hpp>

#include <zlib.h>

#include <filesystem>

#include "test/support/e2e_util.hpp"

using namespace cerebro::e2e;
namespace fs = std::filesystem;

namespace {

// Runs `spec_text` and checks: non-zero exit, a message containing every one of
// `expected`, and no run directory left behind.
void expect_rejected(const TempDir& tmp, const std::string& spec_text, const std::vector<std::string>& expected) {
  auto spec = tmp.write("bad.toml", spec_text);
  auto run_dir = tmp.file("run");
  auto out = run_cerebro("run " + spec + " --out " + run_dir);
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("error:") != std::string::npos);
  for (const auto& e : expected) BOOST_TEST(out.text.find(e) != std::string::npos, "message should contain: " << e);
  BOOST_TEST(!fs::exists(run_dir), "nothing half-written may be left behind");
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string idx_spec(const TempDir& tmp) {
  return "[experiment]\nepochs = 1\n[data]\nsource = \"idx\"\ntrain_images = \"" + tmp.file("train-images.gz") +
         "\"\ntrain_labels = \"" + tmp.file("train-labels.gz") + "\"\ntest_images = \"" + tmp.file("train-images.gz") +
         "\"\ntest_labels = \"" + tmp.file("train-labels.gz") + "\"\n[space]\nmodel = [\"mlp\"]\n";
}

const std::string good_space = "[space]\nmodel = [\"mlp\"]\n";

}  // namespace

BOOST_AUTO_TEST_CASE(unknown_spec_key) {
  TempDir tmp;
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\n") + "[experiment2]\n", {"experiment2"});
  expect_rejected(tmp, "[experiment]\nepochz = 2\n[data]\nsource = \"idx\"\npath = \"/x\"\n" + good_space,
                  {"epochz", "bad.toml:2"});
}

BOOST_AUTO_TEST_CASE(unknown_hyper_parameter) {
  TempDir tmp;
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\nhiden = [[64]]\n"), {"hiden", "config 0"});
}

BOOST_AUTO_TEST_CASE(wrong_type) {
  TempDir tmp;
  expect_rejected(tmp, "[experiment]\nepochs = \"3\"\n[data]\nsource = \"idx\"\npath = \"/x\"\n" + good_space,
                  {"epochs", "integer"});
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\nlr = [\"fast\"]\n"), {"lr", "number"});
}

BOOST_AUTO_TEST_CASE(empty_search_space) {
  TempDir tmp;
  expect_rejected(tmp, small_spec("lr = []\n"), {"lr", "empty"});
  expect_rejected(tmp, "[experiment]\nepochs = 1\n[data]\nsource = \"idx\"\npath = \"/x\"\n", {"space"});
}

BOOST_AUTO_TEST_CASE(missing_dataset_path) {
  TempDir tmp;
  expect_rejected(
      tmp, "[experiment]\nepochs = 1\n[data]\nsource = \"idx\"\npath = \"" + tmp.file("nowhere") + "\"\n" + good_space,
      {"nowhere"});
}

BOOST_AUTO_TEST_CASE(truncated_idx_file) {
  TempDir tmp;
  // Header says 10 images of 28x28 but only 100 bytes of pixels follow.
  write_gz(tmp.file("train-images.gz"), be32(0x803) + be32(10) + be32(28) + be32(28) + std::string(100, '\1'));
  write_gz(tmp.file("train-labels.gz"), be32(0x801) + be32(10) + std::string(10, '\1'));
  expect_rejected(tmp, idx_spec(tmp), {"train-images.gz", "truncated"});
}

BOOST_AUTO_TEST_CASE(wrong_magic_idx_file) {
  TempDir tmp;
  write_gz(tmp.file("train-images.gz"), be32(0x1234) + be32(1) + be32(2) + be32(2) + std::string(4, '\1'));
  write_gz(tmp.file("train-labels.gz"), be32(0x801) + be32(1) + std::string(1, '\1'));
  expect_rejected(tmp, idx_spec(tmp), {"train-images.gz", "magic"});
}

BOOST_AUTO_TEST_CASE(csv_missing_label_column_and_non_numeric_cell) {
  TempDir tmp;
  auto csv = tmp.write("data.csv", "a,b,kind\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,10,x\n11,12,y\n");
  auto spec = [&](const std::string& label) {
    return "[experiment]\nepochs = 1\n[data]\nsource = \"csv\"\ntrain = \"" + csv + "\"\nlabel_column = \"" + label +
           "\"\n" + good_space;
  };
  expect_rejected(tmp, spec("species"), {"species", "data.csv"});
  tmp.write("data.csv", "a,b,kind\n1,2,x\n3,oops,y\n5,6,x\n7,8,y\n9,10,x\n11,12,y\n");
  // The message points at the cell without repeating its content: a file's bytes
  // never travel back in an error (docs/CLUSTER.md, "Data roots").
  expect_rejected(tmp, spec("kind"), {"data.csv", "line 3", "column 2", "not a number"});
}

BOOST_AUTO_TEST_CASE(torchscript_file_missing_or_not_torchscript) {
  TempDir tmp;
  expect_rejected(tmp, small_spec("model = [\"missing.pt\"]\n"), {"missing.pt", "does not exist"});
  tmp.write("text.pt", "this is not a TorchScript archive\n");
  expect_rejected(tmp, small_spec("model = [\"text.pt\"]\n"), {"text.pt", "not a TorchScript module"});
}

BOOST_AUTO_TEST_CASE(occupied_run_directory_is_left_alone) {
  TempDir tmp;
  auto spec = tmp.write("ok.toml", small_spec("model = [\"mlp\"]\n"));
  fs::create_directories(tmp.file("run"));
  tmp.write("run/keep.txt", "mine");
  auto out = run_cerebro("run " + spec + " --out " + tmp.file("run"));
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("not empty") != std::string::npos);
  BOOST_TEST(fs::exists(tmp.file("run/keep.txt")));
}

BOOST_AUTO_TEST_CASE(every_subcommand_has_help) {
  for (const char* sub : {"run", "prepare", "show", "bench"}) {
    auto out = run_cerebro(std::string(sub) + " --help");
    BOOST_TEST(out.exit_code == 0);
    BOOST_TEST(out.text.find("Usage") != std::string::npos, sub);
  }
  BOOST_TEST(run_cerebro("frobnicate").exit_code != 0);
}

// Each subcommand registers itself from its own file (tools/commands/): all of
// them are listed, in the order they always had, each with its own help, and
// the ones that talk to a cluster all carry the shared TLS options.
BOOST_AUTO_TEST_CASE(help_lists_every_subcommand_in_order) {
  const std::vector<std::string> subcommands{"run",     "coordinator", "agent", "attach",   "status",
                                             "prepare", "show",        "bench", "simulate", "repl"};
  auto top = run_cerebro("--help");
  BOOST_TEST_INFO(top.text);
  BOOST_TEST(top.exit_code == 0);
  size_t previous = top.text.find("Subcommands:");
  BOOST_TEST_REQUIRE(previous != std::string::npos);
  for (const auto& sub : subcommands) {
    auto at = top.text.find("\n  " + sub + " ", previous);
    BOOST_TEST(at != std::string::npos, sub << " is listed after the one before it");
    if (at != std::string::npos) previous = at;
    auto help = run_cerebro(sub + " --help");
    BOOST_TEST(help.exit_code == 0);
    BOOST_TEST(help.text.find("Usage: " + cerebro_binary() + " " + sub) != std::string::npos, sub);
  }
  for (const char* sub : {"run", "coordinator", "agent", "attach", "status", "repl"}) {
    auto help = run_cerebro(std::string(sub) + " --help");
    for (const char* option : {"--tls-cert", "--tls-key", "--tls-ca", "--token-file"})
      BOOST_TEST(help.text.find(option) != std::string::npos, sub << " has " << option);
  }
}

// Pipeline stages: a config asking for them is checked (the key
// named). A valid one trains (test_e2e_pipeline).
BOOST_AUTO_TEST_CASE(pipeline_requests_are_checked_and_refused) {
  TempDir tmp;
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\nhidden = [[16]]\nparallelism = \"pipeline\"\nstages = 3\n"),
                  {"[space] config 0", "[space] stages = 3: the model has only 2 top-level children (fc0, fc1)"});
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\nparallelism = \"pipeline\"\nstages = 3\n"),
                  {"[space] stages = 3: more stages than the 2 workers"});
  expect_rejected(tmp, small_spec("model = [\"mlp\"]\nparallelism = \"tensor\"\n"),
                  {"parallelism must be \"auto\" or \"pipeline\""});
}
