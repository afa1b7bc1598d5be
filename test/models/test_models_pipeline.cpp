// Pipeline stages for big models at the LibTorch level:
//  - a 2-stage split gives the same gradients as the whole model within 1e-5
//    (the criterion), for an mlp, a cnn and a TorchScript chain;
//  - a pipeline unit (GPipe micro-batches) ends with the parameters and loss
//    of the same unit trained whole;
//  - each stage's state round-trips on its own, optimizer state included;
//  - the zoo's chains compute what the models compute (resnet too);
//  - the memory estimate matches the optimizer state LibTorch really keeps;
//  - models that cannot be split are refused with the reason.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "models/pipeline.hpp"
#include "models/task.hpp"
#include "models/trainee.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

using Named = std::map<std::string, torch::Tensor>;

Named named(const std::vector<std::pair<std::string, torch::Tensor>>& state) {
  Named out;
  for (const auto& [name, t] : state) out[name] = t;
  return out;
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// The whole model's gradients of the batch's mean loss, by parameter name,
// against the stages' after one GPipe pass; both built from `seed`.
void expect_same_gradients(const json& params, const ShapeInfo& shape, const datasets::Dataset& data, int stages,
                           int micro_batches) {
  const int64_t batch = 32;
  auto x = detail::features_of(data).slice(0, 0, batch);
  auto y = targets_of(data).slice(0, 0, batch);
  torch::manual_seed(11);
  detail::Trainee whole = detail::build(params, shape);
  whole.model->set_training(true);
  Objective(shape, *whole.model).mean_loss(whole.model->forward(x), y).backward();
  Named expected;
  for (const auto& [name, t] : whole.model->named_state())
    if (t.requires_grad()) expected[name] = t.grad();

  torch::manual_seed(11);
  Stages split = split_into_stages(params, shape, stages);
  BOOST_TEST_REQUIRE(split.size() == static_cast<size_t>(stages));
  for (auto& stage : split) stage->set_training(true);
  gpipe_forward_backward(split, x, y, micro_batches);
  size_t compared = 0;
  for (auto& stage : split) {
    BOOST_TEST(!stage->parameters().empty());  // balanced: no empty stage
    for (const auto& [name, p] : stage->named_state()) {
      if (!p.requires_grad()) continue;
      BOOST_TEST_REQUIRE(expected.count(name), name);
      BOOST_TEST_REQUIRE(p.grad().defined(), name);
      BOOST_TEST(max_difference(p.grad(), expected[name]) <= 1e-5,
                 name << ": " << max_difference(p.grad(), expected[name]));
      ++compared;
    }
  }
  BOOST_TEST(compared == expected.size());
}

// A TorchScript chain of two linear layers (`skip`: forward is no plain chain).
std::string script_chain(const TempDir& tmp, bool skip) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  torch::jit::Module first("ChainFirst");
  first.register_parameter("weight", torch::randn({24, 64}) * 0.1, false);
  first.register_parameter("bias", torch::zeros({24}), false);
  first.define(
      "def forward(self, x):\n    return torch.relu(torch.addmm(self.bias, torch.flatten(x, 1), self.weight.t()))\n");
  torch::jit::Module second("ChainSecond");
  second.register_parameter("weight", torch::randn({kClasses, 24}) * 0.1, false);
  second.register_parameter("bias", torch::zeros({kClasses}), false);
  second.define("def forward(self, x):\n    return torch.addmm(self.bias, x, self.weight.t())\n");
  torch::jit::Module net(skip ? "ChainNetScaled" : "ChainNet");
  net.register_module("first", first);
  net.register_module("second", second);
  // Modules built in C++ are called through .forward (no __call__); the graph
  // is the one a scripted torch.nn.Sequential has: a CallMethod per child.
  net.define(skip ? "def forward(self, x):\n    return self.second.forward(self.first.forward(x)) * 2.0\n"
                  : "def forward(self, x):\n    return self.second.forward(self.first.forward(x))\n");
  auto path = tmp.file(skip ? "scaled.pt" : "chain.pt");
  net.save(path);
  return path;
}

UnitInput unit_input(const json& params, const ShapeInfo& shape, const std::string& state,
                     const datasets::Dataset& partition, uint64_t seed) {
  UnitInput in;
  in.params = &params;
  in.shape = shape;
  in.state = &state;
  in.partition = &partition;
  in.seed = seed;
  return in;
}

BOOST_AUTO_TEST_SUITE(pipeline)

BOOST_AUTO_TEST_CASE(two_stages_give_the_whole_models_gradients) {
  Data flat = make_data({1, 8, 8}, 64);
  expect_same_gradients({{"model", "mlp"}, {"hidden", {32, 16}}}, flat.shape, flat.p0, 2, 4);
  expect_same_gradients({{"model", "mlp"}, {"hidden", {32, 16}}}, flat.shape, flat.p0, 3, 5);
  expect_same_gradients({{"model", "cnn"}, {"channels", {4, 8}}, {"fc", 16}}, flat.shape, flat.p0, 2, 4);
  TempDir tmp;
  expect_same_gradients({{"model", script_chain(tmp, false)}}, flat.shape, flat.p0, 2, 3);
  // A transformer splits between its blocks: embedding and first block, second block and head.
  Data tokens = make_token_data();
  expect_same_gradients({{"model", "transformer"}, {"layers", 2}, {"d_model", 16}, {"heads", 2}, {"ff", 32}},
                        tokens.shape, tokens.p0, 2, 4);
}

BOOST_AUTO_TEST_CASE(a_pipeline_unit_ends_where_the_whole_unit_ends) {
  Data d = make_data({1, 8, 8}, 96);
  const json params = {{"model", "mlp"},    {"hidden", {32, 16}},        {"batch_size", 16},
                       {"lr", 0.01},        {"parallelism", "pipeline"}, {"stages", 2},
                       {"micro_batches", 4}};
  auto whole_state = initial_state(params, d.shape, d.p0, 9);
  auto pipe_state = initial_pipeline_state(params, d.shape, 2, 9);
  BOOST_TEST_REQUIRE(whole_state.ok(), whole_state.error());
  BOOST_TEST_REQUIRE(pipe_state.ok(), pipe_state.error());
  BOOST_TEST(is_pipeline_state(*pipe_state));
  // Two units (a hop between them): p0, then p1.
  auto whole1 = run_unit(params, d.shape, *whole_state, d.p0, 21);
  auto pipe1 = train_pipeline_unit(unit_input(params, d.shape, *pipe_state, d.p0, 21));
  BOOST_TEST_REQUIRE(whole1.ok(), whole1.error());
  BOOST_TEST_REQUIRE(pipe1.ok(), pipe1.error());
  auto whole2 = run_unit(params, d.shape, whole1->state, d.p1, 22, &d.validation);
  UnitInput in2 = unit_input(params, d.shape, pipe1->state, d.p1, 22);
  in2.validation = &d.validation;
  auto pipe2 = train_pipeline_unit(in2);
  BOOST_TEST_REQUIRE(whole2.ok(), whole2.error());
  BOOST_TEST_REQUIRE(pipe2.ok(), pipe2.error());
  BOOST_TEST(pipe2->examples == whole2->examples);
  BOOST_TEST(std::abs(pipe1->train_loss - whole1->train_loss) <= 1e-5);
  BOOST_TEST(std::abs(pipe2->train_loss - whole2->train_loss) <= 1e-5);
  BOOST_TEST_REQUIRE(pipe2->validation.has_value());
  BOOST_TEST(std::abs(pipe2->validation->loss - whole2->validation->loss) <= 1e-4);

  detail::Trainee whole = detail::build(params, d.shape);
  detail::restore_state(whole, whole2->state);
  Named expected = named(whole.model->named_state());
  auto parts = unpack_stage_states(pipe2->state);
  BOOST_TEST_REQUIRE(parts.ok(), parts.error());
  Stages stages = split_into_stages(params, d.shape, 2);
  size_t compared = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    stages[s]->restore_state((*parts)[s]);
    for (const auto& [name, t] : stages[s]->named_state()) {
      BOOST_TEST(max_difference(t, expected.at(name)) <= 1e-4, name << ": " << max_difference(t, expected.at(name)));
      ++compared;
    }
  }
  BOOST_TEST(compared == expected.size());

  // Loaded into one model (the best model's test score, its export and
  // cost), the pipeline state is the whole model's: it evaluates as the
  // stages do, and as the whole unit's state within float rounding.
  auto as_whole = whole_model_state(params, d.shape, pipe2->state);
  BOOST_TEST_REQUIRE(as_whole.ok(), as_whole.error());
  BOOST_TEST(!is_pipeline_state(*as_whole));
  auto by_stages = evaluate_pipeline_state(params, d.shape, pipe2->state, d.validation);
  auto by_whole = evaluate_state(params, d.shape, *as_whole, d.validation);
  auto reference = evaluate_state(params, d.shape, whole2->state, d.validation);
  BOOST_TEST_REQUIRE(by_stages.ok(), by_stages.error());
  BOOST_TEST_REQUIRE(by_whole.ok(), by_whole.error());
  BOOST_TEST_REQUIRE(reference.ok(), reference.error());
  BOOST_TEST(std::abs(by_whole->loss - by_stages->loss) <= 1e-6);
  BOOST_TEST(by_whole->accuracy == by_stages->accuracy);
  BOOST_TEST(std::abs(by_whole->loss - reference->loss) <= 1e-4);
  // A whole-model state passes through unchanged.
  auto same = whole_model_state(params, d.shape, whole2->state);
  BOOST_TEST_REQUIRE(same.ok(), same.error());
  BOOST_TEST((*same == whole2->state));
}

BOOST_AUTO_TEST_CASE(stage_states_round_trip_with_their_optimizer_state) {
  Data d = make_data({1, 8, 8}, 64);
  const json params = {{"model", "mlp"}, {"hidden", {16}}, {"batch_size", 16}, {"parallelism", "pipeline"}};
  auto s0 = initial_pipeline_state(params, d.shape, 2, 4);
  BOOST_TEST_REQUIRE(s0.ok(), s0.error());
  auto s1 = train_pipeline_unit(unit_input(params, d.shape, *s0, d.p0, 5));
  BOOST_TEST_REQUIRE(s1.ok(), s1.error());
  // Each stage restored on its own (as a stage's process would) and saved again.
  auto parts = unpack_stage_states(s1->state);
  BOOST_TEST_REQUIRE(parts.ok());
  std::vector<std::string> again;
  for (int s = 0; s < 2; ++s) {
    Stages one = split_into_stages(params, d.shape, 2, s);
    BOOST_TEST_REQUIRE(one.size() == 1u);
    one.front()->restore_state((*parts)[static_cast<size_t>(s)]);
    again.push_back(one.front()->save_state());
    BOOST_TEST(state_difference((*parts)[static_cast<size_t>(s)], again.back()) == "");
    BOOST_TEST(decode_state(again.back()).parameters_with_optimizer_state > 0);  // Adam's moments travelled
  }
  // Training on from the round-tripped state is training on from the original, bit for bit.
  auto from_original = train_pipeline_unit(unit_input(params, d.shape, s1->state, d.p1, 6));
  const std::string round_tripped = pack_stage_states(again);
  auto from_copy = train_pipeline_unit(unit_input(params, d.shape, round_tripped, d.p1, 6));
  BOOST_TEST_REQUIRE(from_original.ok());
  BOOST_TEST_REQUIRE(from_copy.ok());
  auto a = unpack_stage_states(from_original->state), b = unpack_stage_states(from_copy->state);
  for (size_t s = 0; s < 2; ++s) BOOST_TEST(state_difference((*a)[s], (*b)[s]) == "");
  // A stage's state is not another stage's.
  Stages first = split_into_stages(params, d.shape, 2, 0);
  BOOST_CHECK_THROW(first.front()->restore_state((*parts)[1]), std::exception);
  auto wrong = StageRunner::create(params, d.shape, 2, 0, (*parts)[1], 1);
  BOOST_TEST(!wrong.ok());
  BOOST_TEST(wrong.error().find("not stage 0 of 2") != std::string::npos, wrong.error());
  // A whole model's state is not a pipeline's.
  auto whole = initial_state(params, d.shape, d.p0, 4);
  auto refused = train_pipeline_unit(unit_input(params, d.shape, *whole, d.p0, 5));
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.error().find("not a pipeline's stages") != std::string::npos, refused.error());
}

BOOST_AUTO_TEST_CASE(zoo_chains_compute_what_the_models_compute) {
  Data img = make_data({1, 8, 8}, 16);
  auto x = detail::features_of(img.p0);
  for (const json& params : {json{{"model", "mlp"}}, json{{"model", "cnn"}, {"channels", {4, 8}}},
                             json{{"model", "resnet"}, {"width", 4}, {"blocks", {1, 1}}}}) {
    torch::manual_seed(2);
    detail::Trainee whole = detail::build(params, img.shape);
    whole.model->set_training(false);
    auto expected = whole.model->forward(x);
    torch::manual_seed(2);
    Stages stages = split_into_stages(params, img.shape, 2);
    torch::Tensor out = x;
    for (auto& stage : stages) {
      stage->set_training(false);
      out = stage->infer(out);
    }
    BOOST_TEST(max_difference(out, expected) <= 1e-6, params.dump());
  }
}

BOOST_AUTO_TEST_CASE(the_memory_estimate_matches_the_optimizer_state_torch_keeps) {
  Data img = make_data({1, 28, 28}, 64);
  for (const json& optimizer : {json{{"optimizer", "adam"}}, json{{"optimizer", "adamw"}},
                                json{{"optimizer", "sgd"}, {"momentum", 0.9}}, json{{"optimizer", "sgd"}}}) {
    json params = {{"model", "mlp"}, {"hidden", {256, 128}}};
    params.update(optimizer);
    auto chain = measure_chain(params, img.shape);
    BOOST_TEST_REQUIRE(chain.ok(), chain.error());
    BOOST_TEST((chain->link_names == std::vector<std::string>{"fc0", "fc1", "fc2"}));
    detail::Trainee t = detail::build(params, img.shape);
    int64_t parameters = 0;
    for (const auto& p : t.model->parameters()) parameters += p.numel();
    const int64_t estimated_optimizer = chain->total_bytes() - 2 * kBytesPerElement * parameters;
    // One real step, then the optimizer's state as LibTorch serialises it.
    auto x = detail::features_of(img.p0).slice(0, 0, 16);
    Objective(img.shape, *t.model).mean_loss(t.model->forward(x), targets_of(img.p0).slice(0, 0, 16)).backward();
    t.optimizer->step();
    torch::serialize::OutputArchive archive;
    t.optimizer->save(archive);
    std::string bytes;
    archive.save_to([&bytes](const void* data, size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
    const auto actual = static_cast<int64_t>(bytes.size());
    // The archive adds a few KB of names and hyper-parameters to the tensors' bytes.
    BOOST_TEST(actual >= estimated_optimizer, optimizer.dump());
    BOOST_TEST(actual - estimated_optimizer <= 64 * 1024, optimizer.dump()
                                                              << ": " << actual << " vs " << estimated_optimizer);
  }
}

BOOST_AUTO_TEST_CASE(models_that_cannot_be_split_are_refused_with_the_reason) {
  Data d = make_data({1, 8, 8}, 16);
  TempDir tmp;
  const PipelineLimits four{4, 0};
  // A TorchScript forward that is no plain chain.
  auto plan = plan_config({{"model", script_chain(tmp, true)}, {"parallelism", "pipeline"}}, d.shape, four);
  BOOST_TEST((plan.code() == StatusCode::invalid_argument));
  BOOST_TEST(plan.error().find("[space] parallelism = \"pipeline\": the model cannot be split into pipeline stages: "
                               "the TorchScript module's forward is not a plain chain of its children: it computes "
                               "aten::mul") == 0,
             plan.error());
  // A registered module without a chain.
  register_model("pipeline_test_opaque", [](ParamReader&, const DataShape& shape) {
    auto linear = torch::nn::Linear(shape.sample_shape[1] * shape.sample_shape[2], shape.num_classes);
    return NativeModule{linear.ptr(),
                        [linear](const torch::Tensor& x) mutable { return linear->forward(x.flatten(1)); }};
  });
  plan = plan_config({{"model", "pipeline_test_opaque"}, {"parallelism", "pipeline"}}, d.shape, four);
  BOOST_TEST(plan.error().find("registered without a chain of its top-level children") != std::string::npos,
             plan.error());
  // More stages than top-level children, and than workers.
  plan = plan_config({{"model", "mlp"}, {"hidden", {16}}, {"parallelism", "pipeline"}, {"stages", 3}}, d.shape, four);
  BOOST_TEST(plan.error() ==
             "[space] stages = 3: the model has only 2 top-level children (fc0, fc1), fewer than the stages");
  plan = plan_config({{"model", "mlp"}, {"parallelism", "pipeline"}, {"stages", 3}}, d.shape, {2, 0});
  BOOST_TEST(plan.error() == "[space] stages = 3: more stages than the 2 workers");
  // A splittable one plans; a config created while the run trains gets the
  // same stages (planned_stages), and the plan's errors.
  const json ok = {{"model", "mlp"}, {"parallelism", "pipeline"}};
  plan = plan_config(ok, d.shape, four);
  BOOST_TEST_REQUIRE(plan.ok(), plan.error());
  BOOST_TEST(plan->stages == 2);
  auto stages = planned_stages(ok, d.shape, four);
  BOOST_TEST_REQUIRE(stages.ok(), stages.error());
  BOOST_TEST(*stages == 2);
  BOOST_TEST(planned_stages({{"model", "mlp"}}, d.shape, four).value() == 1);
  auto refused = planned_stages({{"model", "mlp"}, {"parallelism", "pipeline"}, {"stages", 3}}, d.shape, {2, 0});
  BOOST_TEST(refused.error() == "[space] stages = 3: more stages than the 2 workers");
  // A model that does not build for this data (too many poolings for 8x8
  // images) has a code of its own: the run skips its plan and the config's
  // pilot check reports it, where a plan's refusal is invalid_argument.
  const json unbuildable = {{"model", "cnn"}, {"channels", {4, 4, 4, 4}}, {"parallelism", "pipeline"}};
  plan = plan_config(unbuildable, d.shape, four);
  BOOST_TEST((plan.code() == StatusCode::failed_precondition), plan.error());
  BOOST_TEST(plan.error().find("building the model failed: ") == 0, plan.error());
  BOOST_TEST((planned_stages(unbuildable, d.shape, four).code() == StatusCode::failed_precondition));
  BOOST_TEST((refused.code() == StatusCode::invalid_argument));
  // Bad values of the keys themselves.
  BOOST_TEST(check_params({{"model", "mlp"}, {"parallelism", "tensor"}}, d.shape).message() ==
             "parallelism must be \"auto\" or \"pipeline\"; got \"tensor\"");
  BOOST_TEST(check_params({{"model", "mlp"}, {"stages", 2}}, d.shape).message() ==
             "stages applies to parallelism = \"pipeline\" only");
  BOOST_TEST(check_params({{"model", "mlp"}, {"parallelism", "pipeline"}, {"stages", 1}}, d.shape).message() ==
             "stages must be >= 2, got 1");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace cerebro::models::testing
