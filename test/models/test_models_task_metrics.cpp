// The tasks' metric arithmetic (models/task.hpp) on hand-computed examples,
// fed in two batches: the counts add up across batches as one pass would.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "models/task.hpp"
#include "test/models/test_models_util.hpp"

using namespace cerebro;
using namespace cerebro::models;

namespace {

ShapeInfo task_shape(datasets::TaskKind task, int64_t width, std::vector<float> target_stddev = {}) {
  ShapeInfo s{{2}, width};
  s.task = task;
  s.target_stddev = std::move(target_stddev);
  return s;
}

torch::Tensor floats(std::vector<std::vector<float>> rows) {
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat).reshape({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(task_metrics)

// Targets 0 0 1 2, predictions 0 1 1 1: F1 per class 2/3, 1/2 and 0.
BOOST_AUTO_TEST_CASE(classification_accuracy_and_macro_f1) {
  MetricAccumulator m(task_shape(datasets::TaskKind::classification, 3));
  m.add(floats({{5, 1, 0}, {0, 5, 1}}), torch::tensor({0, 0}, torch::kInt64));
  m.add(floats({{0, 5, 1}, {1, 5, 0}}), torch::tensor({1, 2}, torch::kInt64));
  double accuracy = -1;
  auto r = m.result(&accuracy);
  BOOST_TEST(accuracy == 0.5);
  BOOST_TEST(r.at("accuracy") == 0.5);
  BOOST_TEST(r.at("macro_f1") == (2.0 / 3 + 0.5 + 0.0) / 3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(!r.count("top5_accuracy"));  // 3 classes: top-5 says nothing
}

// Seven classes ranked 0 > 1 > ... > 6: class 4 is in the top five, class 5 is not.
BOOST_AUTO_TEST_CASE(top5_accuracy_with_more_than_five_classes) {
  MetricAccumulator m(task_shape(datasets::TaskKind::classification, 7));
  auto ranked = floats({{7, 6, 5, 4, 3, 2, 1}});
  m.add(ranked, torch::tensor({4}, torch::kInt64));
  m.add(ranked, torch::tensor({5}, torch::kInt64));
  m.add(ranked, torch::tensor({0}, torch::kInt64));
  m.add(ranked, torch::tensor({6}, torch::kInt64));
  auto r = m.result();
  BOOST_TEST(r.at("top5_accuracy") == 0.5);
  BOOST_TEST(r.at("accuracy") == 0.25);
  // Classes 0 (tp 1, fp 3), 4, 5 and 6 (fn 1 each) occur; the other three count nowhere.
  BOOST_TEST(r.at("macro_f1") == (2.0 / 5) / 4, boost::test_tools::tolerance(1e-12));
}

// Standardized targets 1 2 3 4 with stddev 2 are 2 4 6 8; outputs 1 2 3 5 miss the last by 1 (2 in
// units): mse 4/4, mae 2/4, R^2 = 1 - 4/20. A constant second target predicted exactly scores 1.
BOOST_AUTO_TEST_CASE(regression_mse_mae_and_r2_in_the_targets_units) {
  MetricAccumulator m(task_shape(datasets::TaskKind::regression, 1, {2.0f}));
  m.add(floats({{1}, {2}}), floats({{1}, {2}}));
  m.add(floats({{3}, {5}}), floats({{3}, {4}}));
  auto r = m.result();
  BOOST_TEST(r.at("mse") == 1.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.at("mae") == 0.5, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.at("r2") == 0.8, boost::test_tools::tolerance(1e-9));

  MetricAccumulator two(task_shape(datasets::TaskKind::regression, 2, {2.0f, 1.0f}));
  two.add(floats({{1, 7}, {2, 7}, {3, 7}, {5, 7}}), floats({{1, 7}, {2, 7}, {3, 7}, {4, 7}}));
  auto both = two.result();
  BOOST_TEST(both.at("r2") == (0.8 + 1.0) / 2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(both.at("mse") == 4.0 / 8, boost::test_tools::tolerance(1e-9));
}

// Targets {0,2} and {1}; logits predict {0,2} and {0,1}: one row entirely right, tp 3, fp 1, fn 0.
BOOST_AUTO_TEST_CASE(multilabel_subset_accuracy_and_micro_f1) {
  MetricAccumulator m(task_shape(datasets::TaskKind::multilabel, 3));
  m.add(floats({{2, -1, 3}}), floats({{1, 0, 1}}));
  m.add(floats({{1, 1, -2}}), floats({{0, 1, 0}}));
  auto r = m.result();
  BOOST_TEST(r.at("subset_accuracy") == 0.5);
  BOOST_TEST(r.at("micro_f1") == 6.0 / 7, boost::test_tools::tolerance(1e-12));
}

// A template's metrics replace the built-ins and are averaged over examples (weighted by batch size);
// a value that is not a scalar is refused, naming metrics.
// Two windows of 3 tokens over a vocabulary of 4: positions 1 and 2 are predicted from the logits of
// positions 0 and 1, pad (0) is no target. Window one: targets 2 (logits favour it: ln(e^2 + 3) - 2 nats)
// and 3 (uniform logits: ln 4, argmax 0 is wrong); window two: target 1 right after it, then pad.
BOOST_AUTO_TEST_CASE(language_model_token_accuracy_and_perplexity_leave_pad_out) {
  ShapeInfo shape{{3}, 4};
  shape.task = datasets::TaskKind::language_model;
  auto logits = torch::zeros({2, 3, 4});
  logits[0][0][2] = 2.0;
  logits[1][0][1] = 2.0;
  auto ids = torch::tensor({1.0f, 2.0f, 3.0f, 1.0f, 1.0f, 0.0f}).reshape({2, 3});
  MetricAccumulator m(shape);
  m.add(logits.slice(0, 0, 1), ids.slice(0, 0, 1));
  m.add(logits.slice(0, 1, 2), ids.slice(0, 1, 2));
  const double favoured = std::log(std::exp(2.0) + 3.0) - 2.0, uniform = std::log(4.0);
  auto r = m.result();
  BOOST_TEST(r.at("token_accuracy") == 2.0 / 3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.at("perplexity") == std::exp((2 * favoured + uniform) / 3), boost::test_tools::tolerance(1e-6));
  BOOST_TEST(!r.count("accuracy"));
  // The loss is each batch's mean over its tokens; summed, counted once per example.
  const Objective objective(shape, LossFunction{});
  BOOST_TEST(objective.mean_loss(logits, ids).item<double>() == (2 * favoured + uniform) / 3,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(objective.summed_loss(logits.slice(0, 1, 2), ids.slice(0, 1, 2)) == favoured,
             boost::test_tools::tolerance(1e-6));
  // A window of nothing but pad predicts nothing.
  MetricAccumulator empty(shape);
  empty.add(logits.slice(0, 0, 1), torch::zeros({1, 3}));
  BOOST_TEST(std::isinf(empty.result().at("perplexity")));
}

BOOST_AUTO_TEST_CASE(template_metrics_are_example_weighted_means) {
  MetricsFunction mean_output = [](const torch::Tensor& output, const torch::Tensor&) {
    return std::map<std::string, torch::Tensor>{{"level", output.mean()}};
  };
  MetricAccumulator m(task_shape(datasets::TaskKind::classification, 1), mean_output);
  m.add(floats({{1}, {1}, {1}}), torch::zeros({3}, torch::kInt64));
  m.add(floats({{5}}), torch::zeros({1}, torch::kInt64));
  auto r = m.result();
  BOOST_TEST(r.size() == 1u);
  BOOST_TEST(r.at("level") == (3 * 1.0 + 5.0) / 4);

  MetricsFunction per_example = [](const torch::Tensor& output, const torch::Tensor&) {
    return std::map<std::string, torch::Tensor>{{"level", output}};
  };
  MetricAccumulator bad(task_shape(datasets::TaskKind::classification, 1), per_example);
  BOOST_CHECK_EXCEPTION(bad.add(floats({{1}, {2}}), torch::zeros({2}, torch::kInt64)), Error, [](const Error& e) {
    return std::string(e.what()).find("metrics(output, target)") != std::string::npos;
  });
}

// The embedding API's templates: a registered C++ module's loss and metrics replace the built-ins in
// training and validation, and a loss that is not a scalar is refused by the pilot check, naming it.
BOOST_AUTO_TEST_CASE(a_native_module_brings_its_loss_and_metrics) {
  auto make = [](bool scalar_loss) {
    return [scalar_loss](ParamReader&, const DataShape& shape) {
      auto net = std::make_shared<torch::nn::LinearImpl>(shape.sample_shape[0], shape.num_classes);
      NativeModule m;
      m.module = net;
      m.forward = [net](const torch::Tensor& x) { return net->forward(x); };
      m.loss = [scalar_loss](const torch::Tensor& output, const torch::Tensor& target) {
        auto per_example = torch::nn::functional::cross_entropy(
            output, target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
        return scalar_loss ? per_example.mean() : per_example;
      };
      m.metrics = [](const torch::Tensor& output, const torch::Tensor& target) {
        return std::map<std::string, torch::Tensor>{{"hits", output.argmax(1).eq(target).to(torch::kFloat).mean()}};
      };
      return m;
    };
  };
  register_model("template_good", make(true));
  register_model("template_bad", make(false));
  auto data = models::testing::make_data({8});
  nlohmann::json good{{"model", "template_good"}}, bad{{"model", "template_bad"}};
  BOOST_TEST(check_template(good, data.shape, data.p0, "hits", false).ok());
  auto missing = check_template(good, data.shape, data.p0, "ndcg", false);
  BOOST_TEST(missing.message().find("returns no \"ndcg\"") != std::string::npos, missing.message());
  auto refused = check_template(bad, data.shape, data.p0, "hits", false);
  BOOST_TEST(
      refused.message().find("loss(output, target) must return a scalar Tensor, got shape [2]") != std::string::npos,
      refused.message());

  auto state = initial_state(good, data.shape, data.p0, 1);
  BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
  UnitInput in;
  in.params = &good;
  in.shape = data.shape;
  in.state = &*state;
  in.partition = &data.p0;
  in.validation = &data.validation;
  auto out = train_unit(in);
  BOOST_REQUIRE_MESSAGE(out.ok(), out.error());
  const auto& metrics = out->validation->metrics;
  BOOST_TEST(metrics.size() == 1u);  // the template's, not accuracy and macro_f1
  BOOST_TEST(metrics.at("hits") >= 0.0);
  BOOST_TEST(metrics.at("hits") <= 1.0);
  BOOST_TEST(out->validation->accuracy == 0.0);  // the built-in accuracy was not computed
  BOOST_TEST(out->validation->loss > 0);
}

BOOST_AUTO_TEST_SUITE_END()
