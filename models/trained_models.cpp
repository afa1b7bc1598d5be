#include "models/trained_models.hpp"

#include <optional>

#include "datasets/images.hpp"
#include "datasets/tokenizer.hpp"
#include "models/captions.hpp"
#include "models/detections.hpp"
#include "models/pipeline_runner.hpp"
#include "models/predict.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

// A pipeline config's state is its stages' states framed
// together: what is loaded into one model here is the whole model's.
Result<TrainedModels::Score> TorchTrainedModels::test(const nlohmann::json& params, const std::string& state) {
  if (!test_) return Status::failed_precondition("the run has no test set to score the best model on");
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto evaluation = evaluate_state(params, shape_, *whole, *test_);
  if (!evaluation.ok()) return evaluation.status();
  return Score{evaluation->accuracy, evaluation->loss, evaluation->metrics};
}

Status TorchTrainedModels::export_model(const nlohmann::json& params, const std::string& state,
                                        const std::string& path) {
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto exported = models::export_model(params, shape_, *whole, path);
  if (!exported.ok() || model_info_.is_null()) return exported;
  return attach_model_info(path, model_info_);
}

Result<TrainedModels::Cost> TorchTrainedModels::cost(const nlohmann::json& params, const std::string& state) {
  if (!test_) return Status::failed_precondition("the run has no test set to time the model on");
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  auto measured = model_cost(params, shape_, *whole, *test_);
  if (!measured.ok()) return measured.status();
  return Cost{measured->parameters, measured->inference_ms};
}

namespace {

nlohmann::json box_json(const metrics::Box& box, int64_t label, const std::vector<std::string>& names) {
  const auto k = static_cast<size_t>(label);
  return {{"x", box.x},
          {"y", box.y},
          {"width", box.width},
          {"height", box.height},
          {"label", k < names.size() ? names[k] : std::to_string(label)}};
}

}  // namespace

Result<nlohmann::json> TorchTrainedModels::examples(const nlohmann::json& params, const std::string& state) {
  const bool captions = shape_.task == datasets::TaskKind::captioning;
  if (!captions && shape_.task != datasets::TaskKind::detection)
    return Status::failed_precondition("no pictures of this task's examples");
  if (!test_ || test_->size() == 0) return Status::failed_precondition("the run has no test images");
  auto whole = whole_model_state(params, shape_, state);
  if (!whole.ok()) return whole.status();
  return detail::guarded<nlohmann::json>("the example pictures", [&] {
    auto t = detail::build(params, shape_);
    detail::restore_state(t, *whole);
    t.model->set_training(false);
    torch::NoGradGuard no_grad;
    const int64_t n = std::min(kExampleImages, test_->size());
    auto images = detail::features_of(*test_).slice(0, 0, n);
    // Back to [0, 1] for the eye: the run's normalization undone.
    const auto& norm = model_info_.is_null() ? nlohmann::json() : model_info_.value("normalization", nlohmann::json());
    const auto mean = norm.is_null() ? std::vector<float>{0} : norm.at("mean").get<std::vector<float>>();
    const auto stddev = norm.is_null() ? std::vector<float>{1} : norm.at("stddev").get<std::vector<float>>();
    auto mean_t = torch::tensor(mean), stddev_t = torch::tensor(stddev).clamp_min(1e-12);
    if (mean.size() > 1) {
      mean_t = mean_t.reshape(images[0].sizes());
      stddev_t = stddev_t.reshape(images[0].sizes());
    }
    auto visible = (images * stddev_t + mean_t).contiguous();
    const auto names = model_info_.is_null() ? std::vector<std::string>{}
                                             : model_info_.value("class_names", std::vector<std::string>{});
    std::optional<datasets::Tokenizer> tokenizer;
    if (captions) {
      auto parsed = datasets::Tokenizer::from_json(
          model_info_.is_null() ? nlohmann::json() : model_info_.value("tokenizer", nlohmann::json()));
      if (!parsed.ok()) throw Error(parsed.status());
      tokenizer = std::move(parsed).value();
    }
    nlohmann::json out = nlohmann::json::array();
    std::vector<metrics::TokenIds> written;
    CaptionSet references;
    std::vector<std::vector<metrics::Detection>> found;
    if (captions) {
      // As long as the longest of their captions, and its end.
      references = caption_set(*test_, n);
      written = beam_captions([&](const torch::Tensor& x) { return t.model->forward(x); }, images,
                              references.longest + 1, shape_.beam);
    } else {
      found = decode_detections(t.model->forward(images), shape_.sample_shape[1], shape_.sample_shape[2]);
    }
    for (int64_t i = 0; i < n; ++i) {
      double scale = 1;
      auto picture = datasets::png_data_uri(visible[i].data_ptr<float>(), shape_.sample_shape, 96, &scale);
      if (!picture.ok()) throw Error(picture.status());
      nlohmann::json example{
          {"image", *picture}, {"scale", scale}, {"width", shape_.sample_shape[2]}, {"height", shape_.sample_shape[1]}};
      if (captions) {
        example["caption"] = tokenizer->decode(written[static_cast<size_t>(i)]);
        example["references"] = nlohmann::json::array();
        for (const auto& reference : references.captions[static_cast<size_t>(i)])
          example["references"].push_back(tokenizer->decode(reference));
      } else {
        example["boxes"] = nlohmann::json::array();
        for (const auto& d : found[static_cast<size_t>(i)]) {
          if (d.score < 0.3f) continue;  // what a reader would call a detection
          auto box = box_json(d.box, d.label, names);
          box["score"] = d.score;
          example["boxes"].push_back(box);
        }
        example["truth"] = nlohmann::json::array();
        for (const auto& object : boxes_of(box_targets(datasets::gather(*test_, {i}, 0, 1))[0]))
          example["truth"].push_back(box_json(object.box, object.label, names));
      }
      out.push_back(example);
    }
    return out;
  });
}

}  // namespace cerebro::models
