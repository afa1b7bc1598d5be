#pragma once
// Inside models/ only (it includes LibTorch): the pieces of trainer.cpp that
// the data-parallel gang trainer (gang_trainer.cpp) trains with, so both
// build, restore, save and evaluate a config the same way.

#include <mutex>
#include <memory>

#include <fmt/format.h>
#include <string>

#include "datasets/dataset.hpp"
#include "models/model.hpp"
#include "models/unit_trainer.hpp"

namespace cerebro::models::detail {

// A config's model and optimizer, built from its hyper-parameters.
struct Trainee {
  TrainingParams training;
  std::unique_ptr<Model> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

// The config's optimizer over `params` (the pipeline stages build one per stage).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainingParams& p, std::vector<torch::Tensor> params);
// Reads every key (ParamError on a bad one) and builds model + optimizer. A
// model's initial weights come from LibTorch's global generator: build holds
// SeededWeights' lock while it draws them, so that no other thread's build
// draws between a seed and the weights it is for.
Trainee build(const nlohmann::json& params, const ShapeInfo& shape);

// While alive, the global generator is seeded with `seed` and belongs to this
// thread: its builds (initial_state, a pipeline's first state, a reference
// run) draw the weights of that seed, whatever workers build meanwhile (a
// search that proposes configs as it goes makes initial states while units train).
class SeededWeights {
 public:
  explicit SeededWeights(uint64_t seed);
  SeededWeights(const SeededWeights&) = delete;
  SeededWeights& operator=(const SeededWeights&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};
// `size_hint`: bytes to reserve (a unit's new state is about as large as the one it started from; 0: none).
std::string save_state(Trainee& t, size_t size_hint = 0);
// The state as a LibTorch archive, what save_state wrote before our format
// (and still writes for an optimizer our format does not know).
std::string save_archive_state(Trainee& t, size_t size_hint = 0);
// Reads both formats: ours (models/state_format.hpp, what save_state writes
// for adam, adamw and sgd) and LibTorch's archive (states written before it).
void restore_state(Trainee& t, const std::string& bytes);
// train_unit's work after the restore: trains, validates and saves into `out`.
void train_restored(Trainee& t, const UnitInput& in, UnitOutput& out);
// Borrowed views of a dataset (no copy).
torch::Tensor features_of(const datasets::Dataset& d);
// (The targets' view is targets_of, models/task.hpp.)
// Validation's batch: small enough that a batch's activations stay under
// malloc's largest mmap threshold (32 MB; above it every buffer is mapped
// afresh and faulted in): 1000 examples of the cnn made 100 MB buffers, and
// each validation of 3,000 examples took about 75,000 page faults
// (test_models allocator cases).
constexpr int64_t kEvaluationBatch = 256;
Evaluation evaluate_model(Model& model, const ShapeInfo& shape, const datasets::Dataset& data);
std::string first_line(const std::string& s);

// Runs `body`, turning the exceptions of a bad model or bad state into a Status
// whose message starts with `what`. A cerebro::Error keeps its code; LibTorch's
// and the others' exceptions, which carry none, get `otherwise` (by default: the
// config's model or hyper-parameters do not work on this data).
template <class T, class Body>
Result<T> guarded(const std::string& what, Body body, StatusCode otherwise = StatusCode::invalid_argument) {
  try {
    return body();
  } catch (const Error& e) {
    const StatusCode code = e.code() == StatusCode::unknown ? otherwise : e.code();
    return Status::of(code, fmt::format("{}: {}", what, e.what()));
  } catch (const c10::Error& e) {
    return Status::of(otherwise, fmt::format("{}: {}", what, first_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    return Status::of(otherwise, fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace cerebro::models::detail
