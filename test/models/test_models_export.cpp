// export_model writes TorchScript that plain LibTorch loads and that computes
// what evaluate_state computes; TorchScript .pt files (from C++ and, when
// python3 has torch, from Python) train as configs.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>

#include "models/model.hpp"
#include "models/trained_models.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

// What evaluate_state reports, computed from a loaded TorchScript module.
Evaluation evaluate_loaded(torch::jit::Module& module, const datasets::Dataset& d) {
  torch::NoGradGuard no_grad;
  module.eval();
  std::vector<int64_t> shape{d.size()};
  shape.insert(shape.end(), d.sample_shape.begin(), d.sample_shape.end());
  auto x = torch::from_blob(const_cast<float*>(d.features.data()), shape, torch::kFloat32);
  auto y = torch::from_blob(const_cast<int64_t*>(d.labels.data()), {d.size()}, torch::kInt64);
  auto out = module.forward({x}).toTensor();
  Evaluation e;
  e.examples = d.size();
  e.loss = torch::nn::functional::cross_entropy(out, y).item<double>();
  e.accuracy = out.argmax(1).eq(y).sum().item<double>() / static_cast<double>(d.size());
  return e;
}

std::string trained_state(const json& params, const Data& data) {
  auto s0 = initial_state(params, data.shape, data.p0, 7);
  BOOST_REQUIRE_MESSAGE(s0.ok(), s0.error());
  auto u = run_unit(params, data.shape, *s0, data.p0, 11);
  BOOST_REQUIRE_MESSAGE(u.ok(), u.error());
  BOOST_REQUIRE(!u->diverged);
  return u->state;
}

// Exports `state`, loads the file with torch::jit::load and compares.
void check_export_matches(const json& params, const Data& data, const std::string& state, const std::string& path) {
  auto s = export_model(params, data.shape, state, path);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  auto expected = evaluate_state(params, data.shape, state, data.validation);
  BOOST_REQUIRE_MESSAGE(expected.ok(), expected.error());
  auto loaded = torch::jit::load(path);
  auto got = evaluate_loaded(loaded, data.validation);
  BOOST_TEST(got.loss == expected->loss, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(got.accuracy == expected->accuracy, boost::test_tools::tolerance(1e-5));
}

// A TorchScript module built in C++: a linear layer with a buffer, saved as
// Python's torch.jit.script(module).save(path) would.
void write_script_linear(const std::string& path, int64_t in, int64_t classes) {
  torch::jit::Module m("ScriptLinear");
  m.register_parameter("weight", torch::randn({classes, in}) * 0.01, false);
  m.register_parameter("bias", torch::zeros({classes}), false);
  m.register_buffer("offset", torch::zeros({in}));
  m.define(R"(
def forward(self, x):
    return torch.addmm(self.bias, torch.flatten(x, 1) - self.offset, self.weight.t())
)");
  m.save(path);
}

// A python3 that can import torch (Debian's python3-torch), or "".
std::string python_with_torch() {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    std::string probe = std::string(python) + " -c 'import torch' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return python;
  }
  return "";
}

// Trains a .pt config for a few units and checks it learns and exports.
void check_script_model_trains(const std::string& pt_path, const Data& data, const TempDir& dir) {
  const json params = {{"model", pt_path}, {"lr", 0.01}, {"batch_size", 16}};
  BOOST_TEST(check_params(params, data.shape).message() == "");
  auto unknown = check_params({{"model", pt_path}, {"hidden", 3}}, data.shape);
  BOOST_TEST(unknown.message().find("hidden") != std::string::npos, unknown.message());

  auto s0 = initial_state(params, data.shape, data.p0, 7);
  BOOST_REQUIRE_MESSAGE(s0.ok(), s0.error());
  auto before = evaluate_state(params, data.shape, *s0, data.validation);
  BOOST_REQUIRE_MESSAGE(before.ok(), before.error());
  std::string state = *s0;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    auto u = run_unit(params, data.shape, state, seed % 2 ? data.p1 : data.p0, seed);
    BOOST_REQUIRE_MESSAGE(u.ok(), u.error());
    BOOST_TEST(u->examples == data.p0.size());
    state = u->state;
  }
  auto after = evaluate_state(params, data.shape, state, data.validation);
  BOOST_REQUIRE_MESSAGE(after.ok(), after.error());
  BOOST_TEST(after->loss < before->loss);
  BOOST_TEST(after->accuracy > 0.5);
  check_export_matches(params, data, state, dir.file("exported-from-pt.pt"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(export_and_torchscript)

BOOST_AUTO_TEST_CASE(zoo_exports_load_and_agree_with_evaluate_state) {
  const auto data = make_data({1, 8, 8});
  TempDir dir;
  const char* configs[] = {
      R"({"model": "mlp", "hidden": [32, 16], "dropout": 0.3})",
      R"({"model": "cnn", "channels": [4, 8], "fc": 16, "dropout": 0.3})",
      R"({"model": "resnet", "width": 4, "blocks": [1, 2], "lr": 0.01})",
  };
  for (const char* config : configs) {
    BOOST_TEST_CONTEXT(config) {
      const json params = json::parse(config);
      check_export_matches(params, data, trained_state(params, data), dir.file("model.pt"));
    }
  }
  // Flat rows through the mlp.
  const auto rows = make_data({20});
  const json mlp = json::parse(R"({"model": "mlp", "hidden": [8]})");
  check_export_matches(mlp, rows, trained_state(mlp, rows), dir.file("rows.pt"));
}

BOOST_AUTO_TEST_CASE(export_to_an_unwritable_path_fails_with_the_path) {
  const auto data = make_data({1, 8, 8});
  const json mlp = json::parse(R"({"model": "mlp", "hidden": [8]})");
  auto s0 = initial_state(mlp, data.shape, data.p0, 7);
  BOOST_REQUIRE(s0.ok());
  const std::string path = "/nonexistent-cerebro-dir/model.pt";
  auto s = export_model(mlp, data.shape, *s0, path);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.message().find(path) != std::string::npos, s.message());
}

// What finishing a run sees of the models (runtime/run/run_finisher.hpp):
// the same numbers evaluate_state gives, and a loadable export.
BOOST_AUTO_TEST_CASE(trained_models_score_on_the_test_set_and_export) {
  const auto data = make_data({1, 8, 8});
  TempDir dir;
  const json mlp = json::parse(R"({"model": "mlp", "hidden": [8]})");
  const auto state = trained_state(mlp, data);
  TorchTrainedModels models(data.shape, std::make_shared<const datasets::Dataset>(data.validation));
  auto score = models.test(mlp, state);
  BOOST_REQUIRE_MESSAGE(score.ok(), score.error());
  auto expected = evaluate_state(mlp, data.shape, state, data.validation);
  BOOST_REQUIRE(expected.ok());
  BOOST_TEST(score->accuracy == expected->accuracy);
  BOOST_TEST(score->loss == expected->loss);
  auto exported = models.export_model(mlp, state, dir.file("best.pt"));
  BOOST_REQUIRE_MESSAGE(exported.ok(), exported.message());
  auto loaded = torch::jit::load(dir.file("best.pt"));
  BOOST_TEST(evaluate_loaded(loaded, data.validation).accuracy == expected->accuracy,
             boost::test_tools::tolerance(1e-5));

  TorchTrainedModels without_test_set(data.shape, nullptr);
  auto none = without_test_set.test(mlp, state);
  BOOST_REQUIRE(!none.ok());
  BOOST_TEST(none.error().find("no test set") != std::string::npos, none.error());
}

BOOST_AUTO_TEST_CASE(torchscript_model_from_cpp_trains_and_exports) {
  const auto data = make_data({1, 8, 8});
  TempDir dir;
  const auto path = dir.file("linear.pt");
  write_script_linear(path, 64, kClasses);
  check_script_model_trains(path, data, dir);
}

BOOST_AUTO_TEST_CASE(torchscript_model_from_python_trains_and_exports) {
  const auto python = python_with_torch();
  if (python.empty()) {
    BOOST_TEST_MESSAGE("no python3 with torch: skipping the Python-scripted model");
    return;
  }
  TempDir dir;
  const auto script = dir.file("make_model.py"), path = dir.file("scripted.pt");
  std::ofstream(script) << R"(import sys
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(64)
        self.hidden = torch.nn.Linear(64, 32)
        self.out = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(self.norm(torch.flatten(x, 1)))))

torch.manual_seed(0)
torch.jit.script(Net()).save(sys.argv[1])
)";
  const std::string command = python + " " + script + " " + path;
  BOOST_REQUIRE_EQUAL(std::system(command.c_str()), 0);
  check_script_model_trains(path, make_data({1, 8, 8}), dir);
}

BOOST_AUTO_TEST_CASE(missing_or_invalid_pt_files_are_clear_errors) {
  TempDir dir;
  const ShapeInfo shape{{1, 8, 8}, kClasses};
  const auto missing = dir.file("missing.pt");
  auto e = check_params({{"model", missing}}, shape).message();
  BOOST_TEST(e.find(missing) != std::string::npos, e);
  BOOST_TEST(e.find("does not exist") != std::string::npos, e);

  const auto text = dir.file("x.pt");
  std::ofstream(text) << "this is not a TorchScript archive\n";
  e = check_params({{"model", text}}, shape).message();
  BOOST_TEST(e.find(text) != std::string::npos, e);
  BOOST_TEST(e.find("not a TorchScript module") != std::string::npos, e);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
