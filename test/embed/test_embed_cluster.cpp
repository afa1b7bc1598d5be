// The embedding API end to end inside the test's own actor system: a
// registered dataset source and a registered LibTorch module, an experiment
// built in code, progress and the result as typed messages; and model
// registration hiding a zoo model.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "actors/embedding.hpp"
#include "actors/experiment_runner.hpp"
#include "datasets/batch_read_ahead.hpp"
#include "runtime/spec/spec_builder.hpp"
#include "models/model.hpp"
#include "test/support/temp_dir.hpp"
#include "test/embed/test_embed_util.hpp"

using namespace cerebro;

namespace {

// A linear classifier: the smallest module a registration can give.
models::NativeModule linear_probe(models::ParamReader&, const models::DataShape& shape) {
  int64_t in = 1;
  for (auto size : shape.sample_shape) in *= size;
  torch::nn::Linear linear(in, shape.num_classes);
  return models::NativeModule{linear.ptr(),
                              [linear](const torch::Tensor& x) mutable { return linear->forward(x.flatten(1)); }};
}

void register_blobs(int64_t examples) {
  auto s = datasets::register_dataset_source("blobs", [examples]() -> Result<datasets::SourceData> {
    datasets::SourceData data;
    data.train = testing::separable_dataset(examples, 4, 3, 11);
    return data;
  });
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
}

struct ActorSystem {
  static caf::actor_system_config& configured(caf::actor_system_config& config) {
    configure_actor_system(config, /*load_middleman=*/false);
    return config;
  }
  caf::actor_system_config config;
  caf::actor_system system{configured(config)};
};

ExperimentSpec blobs_spec() {
  auto spec = SpecBuilder("blobs")
                  .data_source("blobs")
                  .epochs(2)
                  .partitions(2)
                  .seed(3)
                  .space("model", {"linear_probe", "mlp"})
                  .space("lr", {0.05})
                  .build();
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
  return *spec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(embedded_cluster)

BOOST_AUTO_TEST_CASE(submit_delivers_progress_and_the_result_to_the_listener) {
  models::register_model("linear_probe", linear_probe);
  register_blobs(300);
  testing::TempDir dir;
  ActorSystem actors;
  LocalCluster cluster(actors.system, {2, dir.file("work")});
  BOOST_TEST(cluster.workers() == 2);

  caf::scoped_actor self{actors.system};
  auto listener = caf::actor_cast<experiment_listener_actor>(self);  // hears progress and the result
  cluster.submit({blobs_spec(), "blobs-1", dir.file("run1")}, listener);
  int64_t last_units_done = 0, units_total = 0;
  int setup_lines = 0;
  experiment_result result;
  bool waiting = true;
  self->receive_while(waiting)(
      [&](progress_atom, const std::string& experiment, const progress_update& p) {
        BOOST_TEST(experiment == "blobs-1");
        if (p.units_total == 0) ++setup_lines;
        last_units_done = std::max(last_units_done, p.units_done);
        units_total = std::max(units_total, p.units_total);
      },
      [&](done_atom, const std::string& experiment, const experiment_result& r) {
        BOOST_TEST(experiment == "blobs-1");
        result = r;
        waiting = false;
      },
      caf::after(std::chrono::seconds(120)) >> [&] { BOOST_FAIL("no result within 120 s"); });
  BOOST_REQUIRE_MESSAGE(result.ok(), result.error);
  BOOST_TEST(setup_lines > 0);   // the ETL's lines, e.g. "loaded 300 training examples ..."
  BOOST_TEST(units_total == 8);  // 2 configs x 2 partitions x 2 epochs
  BOOST_TEST(last_units_done == 8);
  BOOST_REQUIRE(result.leaderboard.size() == 2u);
  BOOST_TEST(result.leaderboard[0].validated);
  BOOST_TEST(result.leaderboard[0].metric > 0.8);  // separable classes; chance is 1/3
  BOOST_TEST(std::filesystem::exists(dir.path() / "run1" / "summary.json"));
  auto summary = result.summary();
  BOOST_TEST(summary["best"]["test_accuracy"].get<double>() > 0.8);
  std::set<std::string> models;
  for (const auto& c : summary["configs"]) models.insert(c["params"]["model"].get<std::string>());
  BOOST_TEST((models == std::set<std::string>{"linear_probe", "mlp"}));

  // A request that cannot run: an error value from run(), a failed result from submit().
  auto blocked = cluster.run({blobs_spec(), "blobs-2", dir.file("run1")});
  BOOST_REQUIRE(!blocked.ok());
  BOOST_TEST(blocked.error().find("not empty") != std::string::npos, blocked.error());
  cluster.submit({blobs_spec(), "blobs-3", dir.file("run1")}, listener);
  self->receive([&](done_atom, const std::string& experiment, const experiment_result& r) {
    BOOST_TEST(experiment == "blobs-3");
    BOOST_TEST(!r.ok());
    BOOST_TEST(r.error.find("not empty") != std::string::npos, r.error);
  });
  datasets::unregister_dataset_source("blobs");
}

BOOST_AUTO_TEST_CASE(run_reports_new_data_from_the_source) {
  models::register_model("linear_probe", linear_probe);
  testing::TempDir dir;
  ActorSystem actors;
  LocalCluster cluster(actors.system, {1, dir.file("work")});
  // 10% carved off as test, then 10% of the rest to validation.
  for (auto [examples, train_examples] : {std::pair<int64_t, int64_t>{150, 121}, {600, 486}}) {
    register_blobs(examples);  // new data arrived: the next prepare sees it
    auto spec = blobs_spec();
    auto run_dir = dir.file("run-" + std::to_string(examples));
    auto result = cluster.run({spec, "blobs-" + std::to_string(examples), run_dir});
    BOOST_REQUIRE_MESSAGE(result.ok(), result.error());
    auto manifest = nlohmann::json::parse(std::ifstream(std::filesystem::path(run_dir) / "data" / "manifest.json"));
    BOOST_TEST(manifest["train_examples"].get<int64_t>() == train_examples);
    BOOST_TEST(result->leaderboard.size() == 2u);
  }
  datasets::unregister_dataset_source("blobs");
}

BOOST_AUTO_TEST_CASE(destruction_answers_every_submitted_experiment) {
  models::register_model("linear_probe", linear_probe);
  register_blobs(150);
  testing::TempDir dir;
  ActorSystem actors;
  caf::scoped_actor self{actors.system};
  auto listener = caf::actor_cast<experiment_listener_actor>(self);  // hears progress and the result
  {
    LocalCluster cluster(actors.system, {1, dir.file("work")});
    for (const char* id : {"first", "second", "third"}) cluster.submit({blobs_spec(), id, dir.file(id)}, listener);
  }  // waits for whichever is running; the others end as "stopped"
  std::set<std::string> answered;
  self->receive_while([&] { return answered.size() < 3; })(
      [&](progress_atom, const std::string&, const progress_update&) {},
      [&](done_atom, const std::string& experiment, const experiment_result& r) {
        answered.insert(experiment);
        BOOST_TEST((r.ok() || r.error.find("the local cluster was stopped") != std::string::npos), r.error);
      },
      caf::after(std::chrono::seconds(60)) >> [&] { BOOST_FAIL("a submitted experiment got no answer"); });
  datasets::unregister_dataset_source("blobs");
}

// [data] read_ahead reaches the units: on partitions larger than
// [cluster] memory_mb (memory-mapped), read_ahead = true trains through the
// batch reader (datasets/batch_read_ahead.hpp) and false does not, and both
// give bit for bit the same losses (one worker: the same visit order).
BOOST_AUTO_TEST_CASE(the_read_ahead_key_reaches_the_units_on_mapped_partitions) {
  // 8,000 examples of 128 features: two partitions of about 2 MB, each over a 1 MB budget.
  auto registered = datasets::register_dataset_source("wide_blobs", []() -> Result<datasets::SourceData> {
    datasets::SourceData data;
    data.train = testing::separable_dataset(8000, 128, 3, 5);
    return data;
  });
  BOOST_REQUIRE_MESSAGE(registered.ok(), registered.message());
  testing::TempDir dir;
  auto run = [&](bool read_ahead) {
    auto spec = SpecBuilder("wide")
                    .data_source("wide_blobs")
                    .epochs(2)
                    .partitions(2)
                    .workers(1)
                    .seed(3)
                    .space("model", {"mlp"})
                    .space("hidden", {nlohmann::json::array({16})})
                    .space("lr", {0.01})
                    .set("data", "cache", false)
                    .set("data", "read_ahead", read_ahead)
                    .set("cluster", "memory_mb", 1)
                    .build();
    BOOST_REQUIRE_MESSAGE(spec.ok(), spec.error());
    BOOST_REQUIRE(spec->data.read_ahead == read_ahead);
    RunOptions options;
    options.spec = *spec;
    options.experiment_id = read_ahead ? "wide-on" : "wide-off";
    options.out_dir = dir.file(options.experiment_id);
    const int64_t before = datasets::BatchReadAhead::readers_started();
    auto summary = run_embedded(options, RunObserver{});
    BOOST_REQUIRE_MESSAGE(summary.ok(), summary.error());
    return std::make_pair(datasets::BatchReadAhead::readers_started() - before, *summary);
  };
  const auto [off_readers, off] = run(false);
  const auto [on_readers, on] = run(true);
  BOOST_TEST(off_readers == 0, "read_ahead = false: no unit reads ahead");
  BOOST_TEST(on_readers >= 4, "read_ahead = true: every unit on a mapped partition reads ahead (2 epochs x 2)");
  BOOST_REQUIRE(off["configs"].size() == 1u);
  BOOST_REQUIRE(on["configs"].size() == 1u);
  const auto& a = off["configs"][0]["epochs"];
  const auto& b = on["configs"][0]["epochs"];
  BOOST_REQUIRE(a.size() == 2u);
  BOOST_REQUIRE(b.size() == 2u);
  for (size_t e = 0; e < a.size(); ++e) {
    BOOST_TEST(a[e]["train_loss"].get<double>() == b[e]["train_loss"].get<double>(), "epoch " << e);
    BOOST_TEST(a[e]["val_loss"].get<double>() == b[e]["val_loss"].get<double>(), "epoch " << e);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(model_registration)

BOOST_AUTO_TEST_CASE(a_registered_model_hides_the_zoo_model_of_that_name) {
  models::DataShape shape{{4}, 3};
  nlohmann::json params = {{"model", "resnet"}};
  models::register_model("resnet", linear_probe);  // hides the zoo model, registered or not yet
  models::ParamReader reader(params);
  auto model = models::build_model("resnet", reader, shape);
  auto state = model->named_state();
  BOOST_REQUIRE(state.size() == 2u);  // weight and bias of the linear probe
  BOOST_TEST(state[0].first == "weight");
  auto names = models::registered_models();
  BOOST_TEST(std::count(names.begin(), names.end(), "resnet") == 1);
  BOOST_TEST(std::count(names.begin(), names.end(), "cnn") == 1);
}

BOOST_AUTO_TEST_CASE(save_as_torchscript_gives_a_module_plain_libtorch_loads) {
  testing::TempDir dir;
  torch::manual_seed(1);
  torch::nn::Module net;
  auto hidden = net.register_module("hidden", torch::nn::Linear(4, 5));
  auto head = net.register_module("head", torch::nn::Linear(5, 3));
  auto path = dir.file("net.pt");
  auto saved = models::save_as_torchscript(net, "Net", R"(def forward(self, x):
    x = torch.relu(torch.addmm(self.hidden_bias, x, self.hidden_weight.t()))
    return torch.addmm(self.head_bias, x, self.head_weight.t())
)",
                                           path);
  BOOST_REQUIRE_MESSAGE(saved.ok(), saved.message());
  auto loaded = torch::jit::load(path);
  auto x = torch::randn({6, 4});
  auto expected = head->forward(torch::relu(hidden->forward(x)));
  auto got = loaded.forward({x}).toTensor();
  BOOST_TEST(torch::allclose(got, expected));
  auto broken = models::save_as_torchscript(net, "Net", "def forward(self, x):\n    return self.missing\n",
                                            dir.file("broken.pt"));
  BOOST_TEST(!broken.ok());
  BOOST_TEST(broken.message().find("TorchScript export failed") != std::string::npos, broken.message());
}

BOOST_AUTO_TEST_SUITE_END()
