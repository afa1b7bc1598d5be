// Detection: the boxes a model learns against, CenterNet's loss and decoding with non-maximum
// suppression, the zoo's detector learning to find squares under MOP's units with mAP, its TorchScript
// export, and errors naming what does not fit.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "models/detections.hpp"
#include "models/trainee.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

const json kSmall = {{"model", "detector"}, {"channels", {16, 32}}, {"head", 32}, {"lr", 0.01}, {"batch_size", 16}};

// Maps for one 16x16 image over a 4x4 grid (cells of 4 pixels) of 3 classes, every heatmap far below 0.
torch::Tensor empty_maps() {
  auto maps = torch::zeros({1, 7, 4, 4});
  maps.slice(1, 0, 3).fill_(-10.0);
  return maps;
}

// An object of `label` centred in cell (row, column) at offset (0.5, 0.5), `cells` wide and high.
void put(torch::Tensor& maps, int64_t label, int64_t row, int64_t column, float logit, float cells) {
  maps[0][label][row][column] = logit;
  maps[0][3][row][column] = cells;
  maps[0][4][row][column] = cells;
  maps[0][5][row][column] = 0.5;
  maps[0][6][row][column] = 0.5;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(detector)

BOOST_AUTO_TEST_CASE(targets_are_each_images_boxes_padded_with_class_minus_one) {
  const auto d = boxed_images(30, 4);
  auto targets = box_targets(d);
  BOOST_TEST((targets.sizes() == torch::IntArrayRef{30, 10}));  // at most two boxes of five numbers
  const auto* boxes = d.field("boxes");
  for (int64_t i = 0; i < 30; ++i) {
    auto found = boxes_of(targets[i]);
    BOOST_REQUIRE_EQUAL(static_cast<int64_t>(found.size()), boxes->items_of(i));
    const auto first = static_cast<size_t>(boxes->offsets[static_cast<size_t>(i)]);
    BOOST_TEST(found[0].box.x == boxes->floats[4 * first]);
    BOOST_TEST(found[0].box.width == boxes->floats[4 * first + 2]);
    BOOST_TEST(found[0].label == d.field("box_labels")->ints[first]);
    if (found.size() == 1) BOOST_TEST(targets[i][9].item<float>() == -1.0f);
  }
  datasets::Dataset plain = d;
  plain.fields.clear();
  BOOST_CHECK_THROW(box_targets(plain), Error);
}

BOOST_AUTO_TEST_CASE(decoding_finds_peaks_and_suppresses_the_rest) {
  auto maps = empty_maps();
  put(maps, 1, 2, 1, 4.0f, 2.0f);  // a box of 8 pixels centred at (6, 10)
  auto found = decode_detections(maps, 16, 16)[0];
  BOOST_REQUIRE_EQUAL(found.size(), 1u);
  BOOST_TEST(found[0].label == 1);
  BOOST_TEST(found[0].box.x == 2.0f);
  BOOST_TEST(found[0].box.y == 6.0f);
  BOOST_TEST(found[0].box.width == 8.0f);
  BOOST_TEST(found[0].score == 1.0f / (1.0f + std::exp(-4.0f)), boost::test_tools::tolerance(1e-6f));
  // A neighbouring cell that scores lower is no peak.
  put(maps, 1, 2, 2, 3.0f, 2.0f);
  BOOST_TEST(decode_detections(maps, 16, 16)[0].size() == 1u);
  // Two peaks two cells apart whose big boxes overlap by more than 0.5: the better stays.
  auto overlapping = empty_maps();
  put(overlapping, 0, 1, 1, 4.0f, 3.5f);
  put(overlapping, 0, 1, 3, 3.0f, 3.5f);
  // 14-pixel boxes centred 8 pixels apart: IoU 84 / 308, both stay; 28-pixel ones: 560 / 1008, one does.
  BOOST_TEST(decode_detections(overlapping, 16, 16)[0].size() == 2u);
  put(overlapping, 0, 1, 3, 3.0f, 7.0f);
  put(overlapping, 0, 1, 1, 4.0f, 7.0f);
  auto suppressed = decode_detections(overlapping, 16, 16)[0];
  BOOST_REQUIRE_EQUAL(suppressed.size(), 1u);
  BOOST_TEST(suppressed[0].score > 0.97f);
  // Another class' box is not suppressed by it.
  put(overlapping, 2, 1, 3, 3.0f, 7.0f);
  BOOST_TEST(decode_detections(overlapping, 16, 16)[0].size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_loss_is_least_for_the_maps_of_the_true_boxes) {
  // One 8-pixel box of class 1 centred at (6, 10): cell (2, 1), offset (0.5, 0.5), 2 cells wide.
  auto targets = torch::tensor({{2.0f, 6.0f, 8.0f, 8.0f, 1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f}});
  auto right = empty_maps();
  put(right, 1, 2, 1, 10.0f, 2.0f);
  auto elsewhere = empty_maps();
  put(elsewhere, 1, 0, 3, 10.0f, 2.0f);
  auto wrong_size = empty_maps();
  put(wrong_size, 1, 2, 1, 10.0f, 3.0f);
  const double best = detection_loss(right, targets, 16, 16).item<double>();
  BOOST_TEST(best < 0.05);
  BOOST_TEST(detection_loss(elsewhere, targets, 16, 16).item<double>() > best + 1.0);
  // 0.1 x the L1 of both sides, one cell each.
  BOOST_TEST(detection_loss(wrong_size, targets, 16, 16).item<double>() - best == 0.2,
             boost::test_tools::tolerance(1e-4));
  // An image without objects is penalised only for what its heatmaps claim.
  auto nothing = torch::full({1, 10}, -1.0f);
  BOOST_TEST(detection_loss(empty_maps(), nothing, 16, 16).item<double>() < 1e-3);
  BOOST_TEST(detection_loss(right, nothing, 16, 16).item<double>() > 1.0);
}

BOOST_AUTO_TEST_CASE(units_teach_it_to_find_the_squares) {
  const auto data = make_box_data();
  const auto [before, after] = learn(kSmall, data, 10, 1);
  BOOST_TEST(before.metrics.at("map50") < 0.1);
  BOOST_TEST(after.metrics.at("map50") > 0.6);
  BOOST_TEST(after.metrics.at("map") <= after.metrics.at("map50"));
  BOOST_TEST(after.loss < before.loss);
}

BOOST_AUTO_TEST_CASE(the_export_computes_its_maps) {
  const auto data = make_box_data();
  TempDir dir;
  auto state = initial_state(kSmall, data.shape, data.p0, 5);
  BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
  auto trained = run_unit(kSmall, data.shape, *state, data.p0, 3);
  BOOST_REQUIRE_MESSAGE(trained.ok(), trained.error());
  auto exported = export_model(kSmall, data.shape, trained->state, dir.file("detector.pt"));
  BOOST_REQUIRE_MESSAGE(exported.ok(), exported.message());
  auto t = detail::build(kSmall, data.shape);
  detail::restore_state(t, trained->state);
  auto x = detail::features_of(data.validation);
  torch::NoGradGuard no_grad;
  t.model->set_training(false);
  auto expected = t.model->forward(x);
  BOOST_TEST((expected.sizes() == torch::IntArrayRef{64, 7, 4, 4}));
  auto got = torch::jit::load(dir.file("detector.pt")).forward({x}).toTensor();
  BOOST_TEST((got - expected).abs().max().item<double>() <= 1e-4);
}

BOOST_AUTO_TEST_CASE(what_does_not_fit_is_an_error_naming_it) {
  const auto tokens = make_token_data();
  auto on_text = initial_state(kSmall, tokens.shape, tokens.p0, 1);
  BOOST_TEST(on_text.error().find("detector needs images with boxes") != std::string::npos, on_text.error());
  const auto data = make_box_data(16);
  json cnn = {{"model", "cnn"}, {"lr", 0.01}, {"batch_size", 16}};
  auto flat = initial_state(cnn, data.shape, data.p0, 1);
  BOOST_TEST(flat.error().find("expected [2, 7, cells down, cells across]") != std::string::npos, flat.error());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
