// Captioning: the rows a model sees (an image and one of its captions), the zoo's captioner learning to
// caption under MOP's units with BLEU-4 of its greedy captions, causal decoding, its TorchScript export,
// and errors naming what does not fit.
#include <boost/test/unit_test.hpp>

#include <set>

#include "models/captions.hpp"
#include "models/task.hpp"
#include "models/trainee.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

const json kSmall = {{"model", "captioner"}, {"channels", {8, 16}}, {"layers", 1},
                     {"d_model", 32},        {"heads", 4},          {"ff", 64},
                     {"lr", 0.01},           {"batch_size", 16}};

torch::Tensor logits_of(detail::Trainee& t, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  t.model->set_training(false);
  return t.model->forward(x);
}

std::vector<float> row(const torch::Tensor& t, int64_t i) {
  auto r = t[i].contiguous();
  return {r.data_ptr<float>(), r.data_ptr<float>() + r.numel()};
}

// A model whose next token is 4 after bos, t + 1 after id t, and eos after id 7.
class CountingModel : public Model {
 public:
  torch::Tensor forward(const torch::Tensor& input) override {
    ++calls;
    auto ids = input.slice(1, 192).to(torch::kInt64);
    auto next = (ids + 1).masked_fill(ids.eq(1), 4).masked_fill(ids.ge(7), 2);
    return torch::one_hot(next, kTokenVocabulary).to(torch::kFloat32);
  }
  std::vector<torch::Tensor> parameters() override { return {}; }
  std::vector<std::pair<std::string, torch::Tensor>> named_state() override { return {}; }
  void set_training(bool) override {}
  Status export_torchscript(const std::string&) override { return Status::invalid_argument("not exported"); }
  int calls = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(captioner)

BOOST_AUTO_TEST_CASE(a_row_is_the_image_then_one_of_its_captions_drawn_from_the_seed) {
  const auto d = captioned_images(40, 7);
  const auto captions = captions_of(d, 0);
  BOOST_REQUIRE_EQUAL(captions.size(), 2u);
  const int64_t kind = captions[0][0] - 4;
  BOOST_TEST(captions[0] == caption_a(kind));
  BOOST_TEST(captions[1] == caption_b(kind));
  // bos, the longest caption (5 ids) and its eos: 7 positions; a shorter caption is padded.
  auto first = caption_targets(d, 0);
  BOOST_TEST((first.sizes() == torch::IntArrayRef{40, 7}));
  BOOST_TEST(row(first, 0) == (std::vector<float>{1, float(4 + kind), 10, 11, 13, 14, 2}));
  // Other seeds draw either caption, each image on its own, the same for the same seed.
  std::set<std::vector<float>> drawn;
  for (uint64_t seed = 1; seed <= 12; ++seed) drawn.insert(row(caption_targets(d, seed), 0));
  BOOST_TEST(drawn.size() == 2u);
  BOOST_TEST(drawn.count({1, 12, float(4 + kind), 15, 13, 2, 0}) == 1u);
  BOOST_TEST(torch::equal(caption_targets(d, 5), caption_targets(d, 5)));
  BOOST_TEST(!torch::equal(caption_targets(d, 5), caption_targets(d, 6)));
  // The model's input is the image's 192 values, then those ids.
  ShapeInfo shape{{3, 8, 8}, kTokenVocabulary, datasets::TaskKind::captioning};
  auto input = task_input(shape, detail::features_of(d), first);
  BOOST_TEST((input.sizes() == torch::IntArrayRef{40, 199}));
  BOOST_TEST(torch::equal(input.slice(1, 192), first));
  BOOST_TEST(torch::equal(input.slice(1, 0, 192), detail::features_of(d).reshape({40, 192})));
  datasets::Dataset plain = d;
  plain.fields.clear();
  BOOST_CHECK_THROW(caption_targets(plain, 0), Error);
}

BOOST_AUTO_TEST_CASE(greedy_decoding_stops_at_eos_and_at_the_longest_caption) {
  CountingModel model;
  auto forward = [](Model& m) { return [&m](const torch::Tensor& x) { return m.forward(x); }; };
  auto captions = greedy_captions(forward(model), torch::zeros({2, 3, 8, 8}), 10);
  BOOST_REQUIRE_EQUAL(captions.size(), 2u);
  for (const auto& caption : captions) BOOST_TEST(caption == (std::vector<int64_t>{4, 5, 6, 7}));
  BOOST_TEST(model.calls == 5);  // one step per token and one for the eos, none after
  CountingModel capped;
  BOOST_TEST(greedy_captions(forward(capped), torch::zeros({1, 3, 8, 8}), 3)[0] == (std::vector<int64_t>{4, 5, 6}));
  BOOST_TEST(capped.calls == 3);
}

// A decoder over ids 0 pad, 1 bos, 2 eos, 3 "a", 4 "b": after bos "a" 0.6 and "b" 0.4 (swapped for an
// image whose pixel is 1), after "a" "a" 0.5, eos and "b" 0.25 each, after "b" eos for certain. Greedy
// decoding takes "a" and then "a" for ever (0.6 * 0.5^k); "b" then eos scores 0.4, which a beam of two
// keeps and ranks first.
torch::Tensor tempting_decoder(const torch::Tensor& x) {
  const int64_t n = x.size(0), t = x.size(1) - 1;
  auto logits = torch::full({n, t, 5}, std::log(1e-6f));
  for (int64_t i = 0; i < n; ++i) {
    const bool swapped = x[i][0].item<float>() == 1;
    const auto last = static_cast<int64_t>(x[i][t].item<float>());
    auto step = logits[i][t - 1];
    if (last == 1) {
      step[3] = std::log(swapped ? 0.4f : 0.6f);
      step[4] = std::log(swapped ? 0.6f : 0.4f);
    } else if (last == 3) {
      step[3] = std::log(0.5f);
      step[2] = std::log(0.25f);
      step[4] = std::log(0.25f);
    } else {
      step[last == 4 ? 2 : 0] = 0;
    }
  }
  return logits;
}

BOOST_AUTO_TEST_CASE(a_beam_finds_the_likelier_caption_that_greedy_decoding_misses) {
  const auto images = torch::tensor({0.0f, 1.0f}).reshape({2, 1, 1, 1});
  const auto greedy = greedy_captions(tempting_decoder, images, 5);
  BOOST_TEST(greedy[0] == (std::vector<int64_t>{3, 3, 3, 3, 3}));
  BOOST_TEST(greedy[1] == (std::vector<int64_t>{4}));
  BOOST_TEST(beam_captions(tempting_decoder, images, 5, 1) == greedy);
  for (int64_t beam : {2, 3, 5}) {
    const auto searched = beam_captions(tempting_decoder, images, 5, beam);
    BOOST_TEST_CONTEXT("beam " << beam) {
      BOOST_TEST(searched[0] == (std::vector<int64_t>{4}));
      BOOST_TEST(searched[1] == (std::vector<int64_t>{4}));
    }
  }
}

BOOST_AUTO_TEST_CASE(units_teach_it_to_caption_the_images) {
  const auto data = make_caption_data();
  const auto [before, after] = learn(kSmall, data, 8, 1);
  for (const char* key : {"token_accuracy", "bleu4"}) BOOST_TEST(after.metrics.count(key) == 1u, key);
  BOOST_TEST(!after.metrics.count("perplexity"));
  BOOST_TEST(before.metrics.at("bleu4") < 0.2);
  // Each image's kind decides both its captions: greedy decoding finds one of them whole.
  BOOST_TEST(after.metrics.at("bleu4") > 0.8);
  // So does a beam of three, scored as a run with [experiment] beam = 3 scores it.
  // Only the decoding differs: the same units train the same model to the same loss.
  auto beamed = data;
  beamed.shape.beam = 3;
  const auto searched = learn(kSmall, beamed, 8, 1).after;
  BOOST_TEST(searched.loss == after.loss);
  BOOST_TEST(searched.metrics.at("bleu4") > 0.8);
  BOOST_TEST(after.loss < before.loss);
}

BOOST_AUTO_TEST_CASE(it_reads_its_caption_causally_and_the_whole_image) {
  const auto data = make_caption_data();
  for (const char* encoder : {"cnn", "resnet"}) {
    json params = kSmall;
    params["encoder"] = encoder;
    torch::manual_seed(1);
    auto t = detail::build(params, data.shape);
    auto x = first_rows(data.p0, data.shape, 4).first;
    auto base = logits_of(t, x);
    BOOST_TEST((base.sizes() == torch::IntArrayRef{4, 7, kTokenVocabulary}));
    auto later = x.clone();
    later.select(1, 192 + 3).fill_(9.0);
    auto changed = logits_of(t, later);
    BOOST_TEST(torch::equal(changed.slice(1, 0, 3), base.slice(1, 0, 3)));
    BOOST_TEST(!torch::allclose(changed.slice(1, 3, 4), base.slice(1, 3, 4)));
    auto corner = x.clone();
    corner.select(1, 191).fill_(5.0);  // the last pixel reaches the first position's logits
    BOOST_TEST(!torch::allclose(logits_of(t, corner).slice(1, 0, 1), base.slice(1, 0, 1)));
  }
}

BOOST_AUTO_TEST_CASE(the_export_computes_its_logits) {
  const auto data = make_caption_data();
  TempDir dir;
  for (const char* encoder : {"cnn", "resnet"}) {
    json params = kSmall;
    params["encoder"] = encoder;
    auto state = initial_state(params, data.shape, data.p0, 5);
    BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
    auto trained = run_unit(params, data.shape, *state, data.p0, 3);
    BOOST_REQUIRE_MESSAGE(trained.ok(), trained.error());
    auto exported = export_model(params, data.shape, trained->state, dir.file("captioner.pt"));
    BOOST_REQUIRE_MESSAGE(exported.ok(), exported.message());
    auto t = detail::build(params, data.shape);
    detail::restore_state(t, trained->state);
    auto x = first_rows(data.validation, data.shape, 8).first;
    auto expected = logits_of(t, x);
    auto loaded = torch::jit::load(dir.file("captioner.pt"));
    torch::NoGradGuard no_grad;
    auto got = loaded.forward({x}).toTensor();
    BOOST_TEST((got - expected).abs().max().item<double>() <= 1e-4, encoder);
  }
}

BOOST_AUTO_TEST_CASE(what_does_not_fit_is_an_error_naming_it) {
  const auto data = make_caption_data();
  json short_captions = kSmall;
  short_captions["max_length"] = 5;
  auto refused = initial_state(short_captions, data.shape, data.p0, 1);
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.error().find("captioner: 7 caption tokens (bos, the longest caption and its eos) exceed "
                                  "max_length 5") != std::string::npos,
             refused.error());
  json uneven = kSmall;
  uneven["heads"] = 3;
  auto split = initial_state(uneven, data.shape, data.p0, 1);
  BOOST_TEST(split.error().find("d_model 32 is not a multiple of heads 3") != std::string::npos, split.error());
  json bad_encoder = kSmall;
  bad_encoder["encoder"] = "vit";
  auto unknown = check_params(bad_encoder, data.shape);
  BOOST_TEST(unknown.message().find("encoder must be cnn or resnet, got \"vit\"") != std::string::npos,
             unknown.message());
  const auto tokens = make_token_data();
  auto on_text = initial_state(kSmall, tokens.shape, tokens.p0, 1);
  BOOST_TEST(on_text.error().find("captioner needs images with captions") != std::string::npos, on_text.error());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
