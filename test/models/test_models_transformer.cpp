// The zoo's transformer: it learns next tokens under MOP's units, its attention is causal and sees at
// most `context` tokens, and its TorchScript export computes its logits.
#include <boost/test/unit_test.hpp>

#include "models/trained_models.hpp"
#include "test/models/test_models_util.hpp"
#include "models/trainee.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

const json kSmall = {{"model", "transformer"}, {"layers", 2}, {"d_model", 32}, {"heads", 4}, {"ff", 64}, {"lr", 0.01},
                     {"batch_size", 16}};

torch::Tensor logits_of(detail::Trainee& t, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  t.model->set_training(false);
  return t.model->forward(x);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transformer)

BOOST_AUTO_TEST_CASE(units_teach_it_the_next_token) {
  const auto data = make_token_data();
  const auto [before, after] = learn(kSmall, data, 6, 0);
  // From about a guess among the 16 ids to nearly sure of the next one (each follows from the one before).
  BOOST_TEST(before.metrics.at("perplexity") > 8.0);
  BOOST_TEST(after.metrics.at("perplexity") < 2.0);
  BOOST_TEST(after.metrics.at("token_accuracy") > 0.8);
  BOOST_TEST(after.loss < before.loss);
}

BOOST_AUTO_TEST_CASE(attention_is_causal_and_sees_at_most_the_context) {
  const auto data = make_token_data();
  auto x = detail::features_of(data.p0).slice(0, 0, 4).clone();
  for (int64_t context : {12, 3}) {
    json params = kSmall;
    params["context"] = context;
    torch::manual_seed(1);
    auto t = detail::build(params, data.shape);
    auto base = logits_of(t, x);
    BOOST_TEST((base.sizes() == torch::IntArrayRef{4, 12, kTokenVocabulary}));
    // A token changed at position 5 changes nothing before it.
    auto later = x.clone();
    later.select(1, 5).fill_(7.0);
    auto changed = logits_of(t, later);
    BOOST_TEST(torch::equal(changed.slice(1, 0, 5), base.slice(1, 0, 5)));
    BOOST_TEST(!torch::allclose(changed.slice(1, 5, 6), base.slice(1, 5, 6)));
    // A token changed at position 0 reaches the positions whose context holds it, and through the two
    // blocks those whose context holds one of those: 2 (context - 1) + 1 positions, no more.
    auto first = x.clone();
    first.select(1, 0).fill_(9.0);
    auto reached = logits_of(t, first);
    const int64_t reach = 2 * (context - 1) + 1;
    BOOST_TEST(!torch::allclose(reached.slice(1, context - 1, context), base.slice(1, context - 1, context)));
    if (reach < 12) BOOST_TEST(torch::equal(reached.slice(1, reach, 12), base.slice(1, reach, 12)));
  }
}

BOOST_AUTO_TEST_CASE(the_export_computes_its_logits) {
  const auto data = make_token_data();
  TempDir dir;
  json params = kSmall;
  params["context"] = 5;
  auto state = initial_state(params, data.shape, data.p0, 5);
  BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
  auto trained = run_unit(params, data.shape, *state, data.p0, 3);
  BOOST_REQUIRE_MESSAGE(trained.ok(), trained.error());
  auto exported = export_model(params, data.shape, trained->state, dir.file("lm.pt"));
  BOOST_REQUIRE_MESSAGE(exported.ok(), exported.message());
  auto t = detail::build(params, data.shape);
  detail::restore_state(t, trained->state);
  auto x = detail::features_of(data.validation);
  auto expected = logits_of(t, x);
  auto loaded = torch::jit::load(dir.file("lm.pt"));
  torch::NoGradGuard no_grad;
  auto got = loaded.forward({x}).toTensor();
  BOOST_TEST((got - expected).abs().max().item<double>() <= 1e-4);
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_params_are_errors_naming_them) {
  const auto data = make_token_data();
  json long_context = kSmall;
  long_context["context"] = 20;
  auto refused = initial_state(long_context, data.shape, data.p0, 1);
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.error().find("context 20 exceeds the data's window of 12 tokens") != std::string::npos,
             refused.error());
  json uneven = kSmall;
  uneven["heads"] = 3;
  auto split = initial_state(uneven, data.shape, data.p0, 1);
  BOOST_TEST(split.error().find("d_model 32 is not a multiple of heads 3") != std::string::npos, split.error());
  const auto images = make_data({1, 8, 8}, 8);
  auto on_images = initial_state(kSmall, images.shape, images.p0, 1);
  BOOST_TEST(on_images.error().find("transformer needs token windows") != std::string::npos, on_images.error());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
