#include "models/predict.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

#include <ATen/CPUGeneratorImpl.h>

#include <fmt/format.h>

#include "datasets/csv.hpp"
#include "datasets/dataset_source.hpp"
#include "datasets/idx.hpp"
#include "datasets/image_files.hpp"
#include "datasets/images.hpp"
#include "datasets/normalization.hpp"
#include "datasets/tokenizer.hpp"
#include "models/captions.hpp"
#include "models/detections.hpp"
#include "models/model.hpp"
#include "runtime/base/enum_names.hpp"
#include "runtime/base/file_io.hpp"

namespace fs = std::filesystem;

namespace cerebro::models {

namespace {

constexpr const char* kInfoEntry = "cerebro/model_info.json";

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A directory in the MNIST layout holds IDX files; any other directory is an image folder.
bool holds_idx_files(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find("idx3-ubyte") != std::string::npos) return true;
  return false;
}

// How the run read its images (model_info "images"), or, for a model trained on IDX images, their shape
// taken as is (no resizing).
Result<datasets::ImageOptions> image_options_of(const std::string& data_path, const nlohmann::json& info) {
  const auto shape = info.at("sample_shape").get<std::vector<int64_t>>();
  datasets::ImageOptions o;
  if (shape.size() != 3 || (shape[0] != 1 && shape[0] != 3))
    return Status::invalid_argument(
        fmt::format("{}: images, but the model was trained on examples of shape [{}], not on "
                    "images ({{channels, height, width}} with 1 or 3 channels)",
                    data_path, fmt::join(shape, ",")));
  o.channels = static_cast<int>(shape[0]);
  o.height = shape[1];
  o.width = shape[2];
  o.resize = false;
  if (auto images = info.find("images"); images != info.end() && images->is_object())
    o.resize = images->value("resize", false);
  return o;
}

// Image files (one, or a folder's) as the run decoded its images; `paths` receives the files in row order.
Result<datasets::Dataset> load_images(const std::string& data_path, const nlohmann::json& info,
                                      std::vector<std::string>& paths) {
  auto options = image_options_of(data_path, info);
  if (!options) return options.status();
  std::error_code ec;
  if (fs::is_directory(data_path, ec)) {
    auto files = datasets::list_image_folder(data_path);
    if (!files) return files.status();
    paths = std::move(*files);
  } else {
    paths = {data_path};
  }
  return datasets::decode_image_files(paths, *options,
                                      "the run did not resize its images (resize = false), so neither does predict");
}

// The examples to predict, as the model saw its training data (normalised). Images: `paths` receives their
// files, one per row.
Result<datasets::Dataset> load_examples(const std::string& data_path, const nlohmann::json& info,
                                        std::vector<std::string>& paths) {
  std::error_code ec;
  if (!fs::exists(data_path, ec)) return Status::not_found(data_path + ": data not found");
  Result<datasets::Dataset> data = Status::internal("");
  const bool directory = fs::is_directory(data_path, ec);
  const bool idx = directory ? holds_idx_files(data_path) : data_path.find("idx3-ubyte") != std::string::npos;
  if (!idx && (directory || datasets::is_image_file(data_path))) {
    data = load_images(data_path, info, paths);
  } else if (idx) {
    std::string images = data_path, labels;
    if (fs::is_directory(data_path, ec)) {
      auto files = datasets::find_idx_files(data_path);
      if (!files) return files.status();
      images = files->test_images;
      labels = files->test_labels;
    } else {
      labels = images;
      labels.replace(labels.find("images-idx3"), std::string("images-idx3").size(), "labels-idx1");
    }
    data = datasets::load_idx(images, labels);
  } else {
    auto features = info.value("feature_names", std::vector<std::string>{});
    if (features.empty())
      return Status::invalid_argument("the model's info names no CSV feature columns (it was not trained on a CSV)");
    data = datasets::load_csv_features(data_path, features);
  }
  if (!data) return data.status();
  const auto shape = info.at("sample_shape").get<std::vector<int64_t>>();
  if (data->sample_shape != shape)
    return Status::invalid_argument(fmt::format("{}: examples of shape [{}], the model was trained on [{}]", data_path,
                                                fmt::join(data->sample_shape, ","), fmt::join(shape, ",")));
  const auto& norm = info.at("normalization");
  datasets::Normalization n{norm.at("mean").get<std::vector<float>>(), norm.at("stddev").get<std::vector<float>>()};
  if (auto applied = datasets::apply_normalization(*data, n); !applied.ok())
    return applied.with_context("the model's normalisation does not fit the data");
  return data;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr int64_t kPredictBatch = 256;

// What a detection model's predictions are written as, by the output file's extension (any other: CSV).
enum class DetectionsFile { csv, coco_results };
constexpr std::array<EnumName<DetectionsFile>, 2> kDetectionsFiles = {
    {{DetectionsFile::csv, ".csv"}, {DetectionsFile::coco_results, ".json"}}};

// Captioning: `row,path,caption`, each image's caption in words, by beam search over `beam` hypotheses.
Result<std::string> captions_csv(torch::jit::Module& module, const nlohmann::json& info, const torch::Tensor& images,
                                 const std::vector<std::string>& paths, int64_t beam) {
  auto tokenizer = datasets::Tokenizer::from_json(info.value("tokenizer", nlohmann::json()));
  if (!tokenizer) return tokenizer.status().with_context("the model's info holds no tokenizer");
  // The zoo's captioner reads at most its position table's rows: bos and the caption.
  int64_t max_tokens = 46;
  if (module.hasattr("positions_weight")) max_tokens = module.attr("positions_weight").toTensor().size(0) - 1;
  auto forward = [&](const torch::Tensor& x) { return module.forward({x}).toTensor(); };
  std::string out = "row,path,caption\n";
  for (int64_t begin = 0; begin < images.size(0); begin += kPredictBatch) {
    const int64_t end = std::min(begin + kPredictBatch, images.size(0));
    const auto captions = beam_captions(forward, images.slice(0, begin, end), max_tokens, beam);
    for (int64_t i = begin; i < end; ++i)
      out += fmt::format("{},{},{}\n", i, csv_cell(paths[static_cast<size_t>(i)]),
                         csv_cell(tokenizer->decode(captions[static_cast<size_t>(i - begin)])));
  }
  return out;
}

// Detection: one CSV row per box (`row,path,class,score,x,y,width,height`), or with `as_json` a COCO results
// file: [{"image_id", "category_id", "bbox", "score"}], an image's id its row + 1 and a class its COCO
// category id. Boxes are in pixels of the image as the model saw it (the run's image size).
std::string detections_out(torch::jit::Module& module, const nlohmann::json& info, const torch::Tensor& images,
                           const std::vector<std::string>& paths, bool as_json) {
  const auto names = info.value("class_names", std::vector<std::string>{});
  const auto ids = info.value("category_ids", std::vector<int64_t>{});
  std::string csv = "row,path,class,score,x,y,width,height\n";
  auto results = nlohmann::json::array();
  for (int64_t begin = 0; begin < images.size(0); begin += kPredictBatch) {
    const int64_t end = std::min(begin + kPredictBatch, images.size(0));
    auto maps = module.forward({images.slice(0, begin, end)}).toTensor();
    const auto found = decode_detections(maps, images.size(2), images.size(3));
    for (int64_t i = begin; i < end; ++i) {
      for (const auto& d : found[static_cast<size_t>(i - begin)]) {
        const auto label = static_cast<size_t>(d.label);
        if (as_json) {
          results.push_back({{"image_id", i + 1},
                             {"category_id", label < ids.size() ? ids[label] : d.label},
                             {"bbox", {d.box.x, d.box.y, d.box.width, d.box.height}},
                             {"score", d.score}});
        } else {
          csv +=
              fmt::format("{},{},{},{:.6f},{:.2f},{:.2f},{:.2f},{:.2f}\n", i, csv_cell(paths[static_cast<size_t>(i)]),
                          csv_cell(label < names.size() ? names[label] : std::to_string(d.label)), d.score, d.box.x,
                          d.box.y, d.box.width, d.box.height);
        }
      }
    }
  }
  return as_json ? results.dump() + "\n" : csv;
}

}  // namespace

nlohmann::json model_info(const datasets::Manifest& m) {
  nlohmann::json info = {
      {"task", datasets::to_string(m.task)},
      {"sample_shape", m.sample_shape},
      {"num_classes", m.num_classes},
      {"class_names", m.class_names},
      {"feature_names", m.feature_names},
      {"normalization",
       {{"mode", m.normalization_mode}, {"mean", m.normalization.mean}, {"stddev", m.normalization.stddev}}},
      {"target_mean", m.target_mean},
      {"target_stddev", m.target_stddev}};
  if (!m.tokenizer.is_null()) info["tokenizer"] = m.tokenizer;
  if (!m.category_ids.empty()) info["category_ids"] = m.category_ids;
  // How the run decoded its images, so that predict decodes an image folder the same way.
  const auto source = datasets::parse_builtin_source(m.source);
  if ((source == datasets::BuiltinSource::images || source == datasets::BuiltinSource::coco) &&
      m.sample_shape.size() == 3)
    info["images"] = {{"channels", m.sample_shape[0]},
                      {"height", m.sample_shape[1]},
                      {"width", m.sample_shape[2]},
                      {"resize", m.images_resized}};
  return info;
}

Status attach_model_info(const std::string& path, const nlohmann::json& info) {
  try {
    auto module = torch::jit::load(path);
    torch::jit::ExtraFilesMap extra{{kInfoEntry, info.dump(2)}};
    const std::string tmp = path + ".info-tmp";
    module.save(tmp, extra);
    fs::rename(tmp, path);
    return Status::ok_status();
  } catch (const std::exception& e) {
    return Status::io_error(fmt::format("{}: cannot store the model info: {}", path, first_line(e.what())));
  }
}

Result<nlohmann::json> read_model_info(const std::string& model_path) {
  std::error_code ec;
  if (!fs::is_regular_file(model_path, ec)) return Status::not_found(model_path + ": model file not found");
  torch::jit::ExtraFilesMap extra{{kInfoEntry, ""}};
  try {
    torch::jit::load(model_path, c10::nullopt, extra);
  } catch (const std::exception& e) {
    return Status::invalid_argument(
        fmt::format("{}: not a TorchScript model file: {}", model_path, first_line(e.what())));
  }
  std::string text = extra[kInfoEntry];
  if (text.empty()) {
    const auto beside = fs::path(model_path).parent_path() / kModelInfoFile;
    auto file = read_whole_file(beside.string());
    if (!file)
      return Status::invalid_argument(
          fmt::format("{}: holds no model info and there is no {} beside it: export it "
                      "from a run (best_model.pt, or export CONFIG in the REPL)",
                      model_path, kModelInfoFile));
    text = *file;
  }
  auto info = nlohmann::json::parse(text, nullptr, false);
  if (info.is_discarded() || !info.is_object())
    return Status::invalid_argument(model_path + ": its model info is not a JSON object");
  return info;
}

Result<int64_t> predict_to_csv(const std::string& model_path, const std::string& data_path, const std::string& out_path,
                               int64_t beam) {
  auto info = read_model_info(model_path);
  if (!info) return info.status();
  try {
    std::vector<std::string> paths;  // images: the file of each row
    auto examples = load_examples(data_path, *info, paths);
    if (!examples) return examples.status();
    auto module = torch::jit::load(model_path);
    module.eval();
    torch::NoGradGuard no_grad;
    const auto task = datasets::parse_task_kind(info->value("task", std::string("classification")))
                          .value_or(datasets::TaskKind::classification);
    const auto names = info->value("class_names", std::vector<std::string>{});
    const auto width = info->at("num_classes").get<int64_t>();
    auto name_of = [&](int64_t k) { return k < static_cast<int64_t>(names.size()) ? names[k] : std::to_string(k); };
    if (task == datasets::TaskKind::captioning || task == datasets::TaskKind::detection) {
      if (paths.empty())
        return Status::invalid_argument(fmt::format("{}: a {} model predicts for image files (one, or a folder)",
                                                    data_path, datasets::to_string(task)));
      const auto& d = *examples;
      auto images =
          torch::from_blob(const_cast<float*>(d.feature_data()),
                           {d.size(), d.sample_shape[0], d.sample_shape[1], d.sample_shape[2]}, torch::kFloat32);
      Result<std::string> written = Status::internal("");
      if (task == datasets::TaskKind::captioning) {
        written = captions_csv(module, *info, images, paths, beam);
      } else {
        const auto format = enum_named<DetectionsFile>(kDetectionsFiles, fs::path(out_path).extension().string());
        written = detections_out(module, *info, images, paths, format == DetectionsFile::coco_results);
      }
      if (!written) return written.status().with_context(model_path);
      if (Status s = write_file_atomically(out_path, *written); !s.ok()) return s;
      return d.size();
    }
    const auto mean = info->value("target_mean", std::vector<float>{});
    const auto stddev = info->value("target_stddev", std::vector<float>{});

    std::string out = paths.empty() ? "row" : "row,path";
    if (task == datasets::TaskKind::regression) {
      for (int64_t k = 0; k < width; ++k) out += "," + csv_cell(name_of(k));
    } else {
      out += task == datasets::TaskKind::classification ? ",class" : ",labels";
      for (int64_t k = 0; k < width; ++k) out += ",p_" + csv_cell(name_of(k));
    }
    out += "\n";
    const auto& d = *examples;
    std::vector<int64_t> shape{d.size()};
    shape.insert(shape.end(), d.sample_shape.begin(), d.sample_shape.end());
    auto x = torch::from_blob(const_cast<float*>(d.feature_data()), shape, torch::kFloat32);
    for (int64_t begin = 0; begin < d.size(); begin += 1000) {
      const int64_t end = std::min(begin + 1000, d.size());
      auto output = module.forward({x.slice(0, begin, end)}).toTensor().to(torch::kFloat64);
      if (output.dim() != 2 || output.size(1) != width)
        return Status::invalid_argument(fmt::format("{}: the model's output has shape [{}], expected [batch, {}]",
                                                    model_path, fmt::join(output.sizes(), ", "), width));
      auto probabilities = task == datasets::TaskKind::classification ? output.softmax(1) : output.sigmoid();
      for (int64_t i = 0; i < end - begin; ++i) {
        out += std::to_string(begin + i);
        if (!paths.empty()) out += "," + csv_cell(paths[static_cast<size_t>(begin + i)]);
        if (task == datasets::TaskKind::regression) {
          for (int64_t k = 0; k < width; ++k) {
            double y = output[i][k].item<double>();
            if (k < static_cast<int64_t>(stddev.size())) y = y * (stddev[k] > 0 ? stddev[k] : 1.0) + mean[k];
            out += fmt::format(",{:.6g}", y);
          }
        } else {
          std::string labels;
          if (task == datasets::TaskKind::classification) {
            labels = csv_cell(name_of(output[i].argmax().item<int64_t>()));
          } else {
            for (int64_t k = 0; k < width; ++k)
              if (probabilities[i][k].item<double>() > 0.5) labels += (labels.empty() ? "" : ";") + name_of(k);
            labels = csv_cell(labels);
          }
          out += "," + labels;
          for (int64_t k = 0; k < width; ++k) out += fmt::format(",{:.6f}", probabilities[i][k].item<double>());
        }
        out += "\n";
      }
    }
    if (Status s = write_file_atomically(out_path, out); !s.ok()) return s;
    return d.size();
  } catch (const c10::Error& e) {
    return Status::invalid_argument(
        fmt::format("{}: prediction failed: {}", model_path, first_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("{}: prediction failed: {}", model_path, first_line(e.what())));
  }
}

Result<std::string> generate_text(const std::string& model_path, const std::string& prompt, int64_t tokens,
                                  double temperature, uint64_t seed) {
  auto info = read_model_info(model_path);
  if (!info) return info.status();
  if (info->value("task", std::string()) != datasets::to_string(datasets::TaskKind::language_model))
    return Status::invalid_argument(fmt::format("{}: a {} model, not a language model (task = \"language_model\")",
                                                model_path, info->value("task", std::string("classification"))));
  auto tokenizer = datasets::Tokenizer::from_json(info->value("tokenizer", nlohmann::json()));
  if (!tokenizer) return tokenizer.status().with_context(model_path + ": its model info holds no tokenizer");
  auto ids = tokenizer->encode(prompt);
  if (ids.empty()) return Status::invalid_argument("the prompt holds no token: give some text to continue");
  const auto shape = info->at("sample_shape").get<std::vector<int64_t>>();
  const int64_t window = shape.empty() ? 1 : shape.back();
  try {
    auto module = torch::jit::load(model_path);
    module.eval();
    torch::NoGradGuard no_grad;
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    for (int64_t step = 0; step < tokens; ++step) {
      const auto first = ids.size() > static_cast<size_t>(window) ? ids.end() - window : ids.begin();
      std::vector<float> context(first, ids.end());
      auto x = torch::tensor(context).unsqueeze(0);
      auto logits = module.forward({x}).toTensor().select(1, x.size(1) - 1).squeeze(0).to(torch::kFloat64);
      logits.slice(0, 0, datasets::kSpecialTokens).fill_(-std::numeric_limits<double>::infinity());
      int64_t next = 0;
      if (temperature > 0) {
        next = torch::multinomial((logits / temperature).softmax(0), 1, false, generator).item<int64_t>();
      } else {
        next = logits.argmax().item<int64_t>();
      }
      ids.push_back(next);
    }
    return tokenizer->decode(ids);
  } catch (const std::exception& e) {
    return Status::invalid_argument(fmt::format("{}: generation failed: {}", model_path, first_line(e.what())));
  }
}

}  // namespace cerebro::models
