// Templates of the structured tasks: a TorchScript module whose forward, loss and metrics take a
// Dict[str, Tensor] gets the batch's named fields (models/template_fields.hpp), trains as a config and is
// scored by its own metrics; its metrics here report what the fields held.
#include <boost/test/unit_test.hpp>

#include "models/trainee.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

json params_of(const std::string& path) { return {{"model", path}, {"lr", 0.01}, {"batch_size", 16}}; }

// A bigram model: each token's embedding times an output map gives the next token's logits.
void save_language_template(const std::string& path) {
  torch::jit::Module m("FieldLanguageModel");
  m.register_parameter("embed", torch::randn({kTokenVocabulary, 8}) * 0.1, false);
  m.register_parameter("out", torch::randn({8, kTokenVocabulary}) * 0.1, false);
  m.define(R"(
def forward(self, batch: Dict[str, Tensor]) -> Tensor:
    return torch.matmul(torch.embedding(self.embed, batch["tokens"]), self.out)

def loss(self, output: Tensor, batch: Dict[str, Tensor]) -> Tensor:
    t = batch["tokens"]
    v = output.size(2)
    return torch.cross_entropy_loss(output[:, :-1].reshape([-1, v]), t[:, 1:].reshape([-1]), None, 1, 0)

def metrics(self, output: Tensor, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    right = torch.eq(torch.argmax(output[:, :-1], 2), batch["tokens"][:, 1:]).float().mean()
    return {"next_right": right, "mean_length": batch["lengths"].float().mean()}
)");
  m.save(path);
}

// Counts an image's objects from its pixels; its metrics echo the target fields.
void save_detection_template(const std::string& path) {
  torch::jit::Module m("FieldCounter");
  m.register_parameter("w", torch::zeros({768, 1}), false);
  m.register_parameter("b", torch::zeros({1}), false);
  m.define(R"(
def forward(self, batch: Dict[str, Tensor]) -> Tensor:
    return torch.matmul(batch["image"].flatten(1), self.w) + self.b

def loss(self, output: Tensor, batch: Dict[str, Tensor]) -> Tensor:
    return torch.mean((output.squeeze(1) - batch["counts"].float()) ** 2)

def metrics(self, output: Tensor, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    first = batch["boxes"][:, 0]
    return {"count_error": torch.mean(torch.abs(output.squeeze(1) - batch["counts"].float())),
            "objects": batch["counts"].float().mean(),
            "first_labelled": (batch["labels"][:, 0] >= 0).float().mean(),
            "first_area": torch.mean(first[:, 2] * first[:, 3])}
)");
  m.save(path);
}

// Captions from the image's mean and the tokens so far; its metrics echo the input fields.
void save_captioning_template(const std::string& path) {
  torch::jit::Module m("FieldCaptioner");
  m.register_parameter("embed", torch::randn({kTokenVocabulary, 8}) * 0.1, false);
  m.register_parameter("from_image", torch::zeros({3, 8}), false);
  m.register_parameter("out", torch::randn({8, kTokenVocabulary}) * 0.1, false);
  m.define(R"(
def forward(self, batch: Dict[str, Tensor]) -> Tensor:
    image = torch.matmul(batch["image"].mean([2, 3]), self.from_image).unsqueeze(1)
    return torch.matmul(torch.embedding(self.embed, batch["tokens"]) + image, self.out)

def loss(self, output: Tensor, batch: Dict[str, Tensor]) -> Tensor:
    t = batch["tokens"]
    v = output.size(2)
    return torch.cross_entropy_loss(output[:, :-1].reshape([-1, v]), t[:, 1:].reshape([-1]), None, 1, 0)

def metrics(self, output: Tensor, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    return {"mean_length": batch["lengths"].float().mean(), "first_token": batch["tokens"][:, 0].float().mean()}
)");
  m.save(path);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(field_templates)

BOOST_AUTO_TEST_CASE(a_language_template_gets_tokens_and_lengths) {
  TempDir dir;
  save_language_template(dir.file("lm.pt"));
  const auto data = make_token_data();
  const auto [before, after] = learn(params_of(dir.file("lm.pt")), data, 3);
  // Of 64 windows of 12 tokens every fourth holds 7: 10.75 on average.
  BOOST_TEST(after.metrics.at("mean_length") == 10.75, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(after.metrics.at("next_right") > before.metrics.at("next_right"));
  BOOST_TEST(after.loss < before.loss);
  BOOST_TEST(!after.metrics.count("perplexity"));  // its metrics replace the built-ins
}

BOOST_AUTO_TEST_CASE(a_detection_template_gets_the_image_and_its_boxes) {
  TempDir dir;
  save_detection_template(dir.file("counter.pt"));
  const auto data = make_box_data();
  const auto [before, after] = learn(params_of(dir.file("counter.pt")), data, 3);
  const auto* boxes = data.validation.field("boxes");
  double area = 0;
  for (int64_t i = 0; i < data.validation.size(); ++i) {
    const auto first = static_cast<size_t>(4 * boxes->offsets[static_cast<size_t>(i)]);
    area += boxes->floats[first + 2] * boxes->floats[first + 3];
  }
  const double n = static_cast<double>(data.validation.size());
  BOOST_TEST(after.metrics.at("objects") == static_cast<double>(boxes->items()) / n,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(after.metrics.at("first_labelled") == 1.0);
  BOOST_TEST(after.metrics.at("first_area") == area / n, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(after.metrics.at("count_error") < before.metrics.at("count_error"));
}

BOOST_AUTO_TEST_CASE(a_captioning_template_gets_the_image_and_a_caption) {
  TempDir dir;
  save_captioning_template(dir.file("captioner.pt"));
  const auto data = make_caption_data();
  const auto [before, after] = learn(params_of(dir.file("captioner.pt")), data, 3);
  // A validation reads each image's first caption: bos, its 5 ids and eos.
  BOOST_TEST(after.metrics.at("mean_length") == 7.0);
  BOOST_TEST(after.metrics.at("first_token") == 1.0);  // bos
  BOOST_TEST(!after.metrics.count("bleu4"));
  BOOST_TEST(after.loss < before.loss);
}

BOOST_AUTO_TEST_CASE(fields_for_a_label_task_are_an_error_naming_it) {
  TempDir dir;
  save_detection_template(dir.file("counter.pt"));
  const auto data = make_data({3, 16, 16});
  auto refused = initial_state(params_of(dir.file("counter.pt")), data.shape, data.p0, 1);
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.error().find("needs a task with fields (captioning, detection, language_model); this one is "
                                  "classification") != std::string::npos,
             refused.error());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
