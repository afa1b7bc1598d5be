// The tasks beyond classification and the training templates, end to end:
// regression on scikit-learn's diabetes data (442 patients, 10 features),
// multilabel on its handwritten digits (tags derived from each digit:
// even, large, prime, loop), and a TorchScript template scripted in Python
// with its own loss and metric; resume and a fault for the new tasks; bad
// input; `cerebro predict` on what the runs leave.
#define BOOST_TEST_MODULE tasks
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "test/support/faults_util.hpp"

using namespace cerebro;
using namespace cerebro::e2e;
using namespace cerebro::faults;
namespace fs = std::filesystem;

namespace {

// Debian's python3 (python3-sklearn, python3-torch), whatever else is on PATH.
constexpr const char* kPython = "/usr/bin/python3";

// Runs a Python script written to a file (torch.jit.script needs the source in a file).
void run_python(const TempDir& tmp, const std::string& name, const std::string& script, const std::string& args = "") {
  auto path = tmp.write(name, script);
  auto out = run_command(std::string(kPython) + " " + path + " " + args);
  BOOST_REQUIRE_MESSAGE(out.exit_code == 0, name << " failed: " << out.text);
}

std::string diabetes_csv(const TempDir& tmp) {
  run_python(tmp, "diabetes.py",
             "import csv, sys\nfrom sklearn.datasets import load_diabetes\n"
             "d = load_diabetes(scaled=False)\nw = csv.writer(open(sys.argv[1], 'w'))\n"
             "w.writerow(list(d.feature_names) + ['progression'])\n"
             "for x, y in zip(d.data, d.target): w.writerow(list(x) + [y])\n",
             tmp.file("diabetes.csv"));
  return tmp.file("diabetes.csv");
}

std::string digits_csv(const TempDir& tmp, bool multilabel) {
  run_python(tmp, "digits.py",
             "import csv, sys\nfrom sklearn.datasets import load_digits\n"
             "d = load_digits()\nw = csv.writer(open(sys.argv[1], 'w'))\nmultilabel = sys.argv[2] == '1'\n"
             "def tags(c):\n"
             "    t = [n for n, yes in (('even', c % 2 == 0), ('large', c >= 5), ('prime', c in (2, 3, 5, 7)),\n"
             "                          ('loop', c in (0, 6, 8, 9))) if yes]\n"
             "    return ';'.join(t)\n"
             "w.writerow(['p%d' % i for i in range(64)] + ['label'])\n"
             "for x, y in zip(d.data, d.target): w.writerow([int(v) for v in x] + [tags(y) if multilabel else y])\n",
             tmp.file("digits.csv") + (multilabel ? " 1" : " 0"));
  return tmp.file("digits.csv");
}

std::string regression_spec(const TempDir& tmp, const std::string& csv) {
  return tmp.write("regression.toml",
                   "[experiment]\ntask = \"regression\"\nepochs = 6\nseed = 7\n[data]\nsource = \"csv\"\ntrain = \"" +
                       csv +
                       "\"\nlabel_column = \"progression\"\npartitions = 2\n[cluster]\nworkers = 2\n[space]\n"
                       "model = [\"mlp\"]\nlr = [0.003, 0.01]\nbatch_size = [32]\n");
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

// Regression: every epoch reports val_mse, val_mae and val_r2, the run ranks
// by val_r2 and scores the best config on the test set; killed after a commit
// it resumes; its best model predicts the target in its own units.
BOOST_AUTO_TEST_CASE(regression_on_diabetes_ranks_by_r2_resumes_and_predicts) {
  TempDir tmp;
  auto csv = diabetes_csv(tmp);
  auto run = tmp.file("run");
  auto first = run_command(with_faults("crash=after_commit:9") + cerebro_binary() + " run " +
                           regression_spec(tmp, csv) + " --out " + run);
  BOOST_TEST_INFO(first.text);
  BOOST_REQUIRE(first.exit_code != 0);
  BOOST_REQUIRE_EQUAL(commits_in(open_store(run)->unit_log()), 9u);
  auto resumed = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(resumed.text);
  BOOST_REQUIRE_EQUAL(resumed.exit_code, 0);
  check_complete_run(open_store(run)->unit_log(), 2, 2, 6);

  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["metric"] == "val_r2");
  BOOST_TEST(summary["resumes"] == 1);
  for (const auto& config : summary["configs"]) {
    BOOST_REQUIRE_EQUAL(config["epochs"].size(), 6u);
    for (const auto& epoch : config["epochs"]) {
      for (const char* key : {"val_loss", "val_mse", "val_mae", "val_r2"}) BOOST_TEST(epoch.contains(key), key);
      BOOST_TEST(!epoch.contains("val_accuracy"));
    }
  }
  const auto& best = summary["best"];
  // The best config's validation R^2 leads the board, and it predicts well above the mean (R^2 0).
  BOOST_TEST(best["val_r2"].get<double>() > 0.3);
  BOOST_TEST(best["val_r2"].get<double>() == summary["configs"][best["id"].get<int>()]["metric"].get<double>());
  for (const char* key : {"test_r2", "test_mse", "test_mae", "test_loss"}) BOOST_TEST(best.contains(key), key);
  BOOST_TEST(best["test_mse"].get<double>() > 100.0);  // in the target's own units (its variance is about 6000)
  auto csv_header = lines_of(run + "/metrics.csv").at(0);
  BOOST_TEST(csv_header == "config,epoch,status,train_loss,val_loss,val_mae,val_mse,val_r2,seconds,params");
  BOOST_TEST(resumed.text.find("val_r2") != std::string::npos);

  // Batch prediction with the run's best model: one row per patient, the label column ignored.
  auto predictions = tmp.file("predictions.csv");
  auto predicted = run_cerebro("predict " + run + "/best_model.pt " + csv + " --out " + predictions);
  BOOST_TEST_INFO(predicted.text);
  BOOST_REQUIRE_EQUAL(predicted.exit_code, 0);
  auto rows = lines_of(predictions);
  BOOST_REQUIRE_EQUAL(rows.size(), 443u);
  BOOST_TEST(rows[0] == "row,progression");
  // Predictions are in the target's units (25 .. 346), not standardized.
  const double first_prediction = std::stod(rows[1].substr(rows[1].find(',') + 1));
  BOOST_TEST(first_prediction > 25.0);
  BOOST_TEST(first_prediction < 400.0);

  // The REPL's predict: a config of an experiment it ran, over the same CSV.
  auto script = tmp.write("predict.repl", "submit " + regression_spec(tmp, csv) + "\nwait\npredict 1 " + csv + " " +
                                              tmp.file("repl.csv") + "\nquit\n");
  auto repl = run_command(cerebro_binary() + " repl --state " + tmp.file("repl-state") + " --workers 2 < " + script);
  BOOST_TEST_INFO(repl.text);
  BOOST_REQUIRE_EQUAL(repl.exit_code, 0);
  BOOST_TEST(repl.text.find("wrote 442 predictions of config 1") != std::string::npos);
  auto repl_rows = lines_of(tmp.file("repl.csv"));
  BOOST_REQUIRE_EQUAL(repl_rows.size(), 443u);
  BOOST_TEST(repl_rows[0] == "row,progression");
  BOOST_TEST(!fs::exists(tmp.file("repl.csv") + ".model.pt"));  // the exported model does not stay
}

// Multilabel: tags of each digit from ';'-separated cells; a failing unit is
// retried and the run completes; predictions list the tags.
BOOST_AUTO_TEST_CASE(multilabel_digits_survive_a_failing_unit_and_predict_tags) {
  TempDir tmp;
  auto csv = digits_csv(tmp, true);
  auto spec = tmp.write("multilabel.toml",
                        "[experiment]\ntask = \"multilabel\"\nepochs = 3\n[data]\nsource = \"csv\"\n"
                        "train = \"" +
                            csv +
                            "\"\nlabel_column = \"label\"\npartitions = 2\n"
                            "[cluster]\nworkers = 2\n[space]\nmodel = [\"mlp\"]\nlr = [0.003]\n");
  auto run = tmp.file("run");
  auto out = run_command(with_faults("fail_unit=0:1:1") + cerebro_binary() + " run " + spec + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  BOOST_TEST(out.text.find("failed (attempt 1") != std::string::npos);
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["metric"] == "val_micro_f1");
  BOOST_TEST(summary["configs"][0]["status"] == "completed");
  const auto& best = summary["best"];
  BOOST_TEST(best["val_micro_f1"].get<double>() > 0.8);
  BOOST_TEST(best["test_micro_f1"].get<double>() > 0.8);
  BOOST_TEST(best["test_subset_accuracy"].get<double>() > 0.5);
  BOOST_TEST(best["test_subset_accuracy"].get<double>() <= best["test_micro_f1"].get<double>() + 0.2);

  auto predictions = tmp.file("tags.csv");
  auto predicted = run_cerebro("predict " + run + "/best_model.pt " + csv + " --out " + predictions);
  BOOST_REQUIRE_MESSAGE(predicted.exit_code == 0, predicted.text);
  auto rows = lines_of(predictions);
  BOOST_REQUIRE_EQUAL(rows.size(), 1798u);
  BOOST_TEST(rows[0] == "row,labels,p_even,p_large,p_loop,p_prime");
  BOOST_TEST(rows[1].rfind("0,even;loop,", 0) == 0);  // the first digit is a 0
}

namespace {

const char* kTemplate = R"(import sys
from typing import Dict
import torch

class Template(torch.nn.Module):
    def __init__(self, features: int, classes: int, scalar_loss: bool):
        super().__init__()
        self.fc1 = torch.nn.Linear(features, 64)
        self.fc2 = torch.nn.Linear(64, classes)
        self.scalar_loss = scalar_loss

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))

    @torch.jit.export
    def loss(self, output, target):
        per_example = torch.nn.functional.cross_entropy(output, target, label_smoothing=0.1, reduction='none')
        return per_example.mean() if self.scalar_loss else per_example

    @torch.jit.export
    def metrics(self, output, target) -> Dict[str, torch.Tensor]:
        right = output.softmax(1).gather(1, target.unsqueeze(1)).squeeze(1)
        return {"accuracy": (output.argmax(1) == target).float().mean(), "confidence": right.mean()}

torch.jit.script(Template(64, 10, sys.argv[2] == "1")).save(sys.argv[1])
)";

std::string template_spec(const TempDir& tmp, const std::string& csv, const std::string& model) {
  return tmp.write("template.toml",
                   "[experiment]\nepochs = 3\nmetric = \"val_confidence\"\nmetric_goal = \"maximize\"\n"
                   "[data]\nsource = \"csv\"\ntrain = \"" +
                       csv +
                       "\"\nlabel_column = \"label\"\n"
                       "partitions = 2\n[cluster]\nworkers = 2\n[space]\nmodel = [\"" +
                       model + "\"]\nlr = [0.003, 0.0003]\n");
}

}  // namespace

// A TorchScript module's own loss (label smoothing) and metrics (confidence)
// replace the built-ins: the run ranks by val_confidence and scores
// test_confidence; killed after a commit it resumes (the template's fault
// case); a loss that returns one value per example is refused before
// anything is kept, naming the method.
BOOST_AUTO_TEST_CASE(a_torchscript_template_brings_its_loss_and_metric) {
  TempDir tmp;
  auto csv = digits_csv(tmp, false);
  run_python(tmp, "template.py", kTemplate, tmp.file("good.pt") + " 1");
  run_python(tmp, "template.py", kTemplate, tmp.file("bad.pt") + " 0");
  auto run = tmp.file("run");
  auto crashed = run_command(with_faults("crash=after_commit:5") + cerebro_binary() + " run " +
                             template_spec(tmp, csv, tmp.file("good.pt")) + " --out " + run);
  BOOST_TEST_INFO(crashed.text);
  BOOST_REQUIRE(crashed.exit_code != 0);
  BOOST_REQUIRE_EQUAL(commits_in(open_store(run)->unit_log()), 5u);
  auto out = run_cerebro("run --resume " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_REQUIRE_EQUAL(out.exit_code, 0);
  check_complete_run(open_store(run)->unit_log(), 2, 2, 3);
  auto summary = read_json(run + "/summary.json");
  BOOST_TEST(summary["resumes"] == 1);
  BOOST_TEST(summary["metric"] == "val_confidence");
  BOOST_TEST(summary["metric_goal"] == "maximize");
  for (const auto& epoch : summary["configs"][0]["epochs"]) {
    BOOST_TEST(epoch.contains("val_confidence"));
    BOOST_TEST(epoch.contains("val_accuracy"));
    BOOST_TEST(!epoch.contains("val_macro_f1"));  // the template's metrics replace the built-ins
  }
  const auto& best = summary["best"];
  // The higher learning rate ranks first by confidence; label smoothing keeps it below 1.
  BOOST_TEST(best["params"]["lr"].get<double>() == 0.003);
  BOOST_TEST(best["val_confidence"].get<double>() > 0.5);
  BOOST_TEST(best["val_confidence"].get<double>() < 0.95);
  BOOST_TEST(best["test_confidence"].get<double>() > 0.5);
  BOOST_TEST(best["test_accuracy"].get<double>() > 0.8);

  auto bad_run = tmp.file("bad-run");
  auto bad = run_cerebro("run " + template_spec(tmp, csv, tmp.file("bad.pt")) + " --out " + bad_run);
  BOOST_TEST_INFO(bad.text);
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(bad.text.find("loss(output, target) must return a scalar") != std::string::npos);
  BOOST_TEST(bad.text.find("config 0") != std::string::npos);
  BOOST_TEST(!fs::exists(bad_run), "nothing half-written may be left behind");
}

// A regression target that is not a number names the file, line and column;
// a metric the task does not compute names the task's metrics; neither leaves
// a run directory.
BOOST_AUTO_TEST_CASE(bad_task_input_is_refused_with_the_column_named) {
  TempDir tmp;
  auto csv = tmp.write("bad.csv", "x1,x2,y\n1,2,3.5\n2,3,4.5\n3,4,n/a\n4,5,6.5\n");
  auto spec = tmp.write("bad.toml", "[experiment]\ntask = \"regression\"\n[data]\nsource = \"csv\"\ntrain = \"" + csv +
                                        "\"\nlabel_column = [\"y\"]\n[space]\nmodel = [\"mlp\"]\n");
  auto run = tmp.file("run");
  auto out = run_cerebro("run " + spec + " --out " + run);
  BOOST_TEST_INFO(out.text);
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("bad.csv: line 4, column 'y': not a number") != std::string::npos);
  BOOST_TEST(out.text.find("n/a") == std::string::npos);
  BOOST_TEST(!fs::exists(run));

  auto wrong_metric = tmp.write("metric.toml",
                                "[experiment]\ntask = \"regression\"\nmetric = \"val_accuracy\"\n"
                                "[data]\nsource = \"csv\"\ntrain = \"" +
                                    csv + "\"\nlabel_column = \"y\"\n[space]\nmodel = [\"mlp\"]\n");
  out = run_cerebro("run " + wrong_metric + " --out " + run);
  BOOST_TEST(out.exit_code != 0);
  BOOST_TEST(out.text.find("is not computed for task regression (its metrics: val_loss, val_mse, val_mae, val_r2)") !=
                 std::string::npos,
             out.text);
  BOOST_TEST(!fs::exists(run));
}
