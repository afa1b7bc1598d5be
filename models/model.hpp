#pragma once
// The model abstraction every config trains through, and the registry that
// maps a `model` hyper-parameter to a module. Includes LibTorch: use it only
// from models/ and from C++ users registering their own modules.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/script.h>
#include <torch/torch.h>

#include "datasets/task_kind.hpp"
#include "models/params.hpp"

namespace cerebro::models {

// What a model must fit: one example's shape and the number of classes (the
// number of outputs: for regression the targets, for multilabel the labels).
struct DataShape {
  std::vector<int64_t> sample_shape;
  int64_t num_classes = 0;
  // What the model learns: a template whose forward takes a Dict[str, Tensor] gets the task's fields
  // (models/template_fields.hpp).
  datasets::TaskKind task = datasets::TaskKind::classification;
};

// A training template's own objective (docs/TEMPLATES.md): `loss` returns a
// scalar to minimise for a batch; `metrics` named scalars for a batch, which
// a validation averages over its examples (weighted by batch size).
using LossFunction = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;
using MetricsFunction =
    std::function<std::map<std::string, torch::Tensor>(const torch::Tensor& output, const torch::Tensor& target)>;

// One top-level child of a model whose forward is a chain of them (pipeline
// stages, docs/CLUSTER.md): what it computes and the tensors it owns. A model split
// into stages keeps, per stage, only its links' tensors alive.
struct ChainLink {
  std::string name;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::vector<std::pair<std::string, torch::Tensor>> parameters;  // named as in the whole model
  std::vector<std::pair<std::string, torch::Tensor>> buffers;
  std::function<void(bool)> set_training;
  std::function<void(const torch::Generator&)> set_generator;  // optional: forward-time randomness
};

// A link made of submodules `parts` (name in the whole model, module):
// parameters and buffers are named "<part>.<key>", training mode applies to
// every part.
ChainLink chain_link(std::string name, std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> parts,
                     std::function<torch::Tensor(const torch::Tensor&)> forward,
                     std::function<void(const torch::Generator&)> set_generator = {});

// One trainable network, native (torch::nn) or TorchScript. Not thread-safe:
// a worker owns its Model for the duration of a unit.
class Model {
 public:
  virtual ~Model() = default;
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
  virtual std::vector<torch::Tensor> parameters() = 0;
  // Parameters and buffers (BatchNorm statistics ...) in a stable order: the
  // part of the model state that is not the optimizer's.
  virtual std::vector<std::pair<std::string, torch::Tensor>> named_state() = 0;
  virtual void set_training(bool on) = 0;
  // Random draws inside forward (dropout) use this generator when the model
  // supports it, so a unit's result does not depend on other threads.
  virtual void set_generator(const torch::Generator& generator) { (void)generator; }
  // Writes a file plain LibTorch loads with torch::jit::load (TorchScript).
  // Returns an error when this kind of model cannot be exported that way.
  virtual Status export_torchscript(const std::string& path) = 0;
  // A training template's loss and metrics (a TorchScript module's `loss` and
  // `metrics` methods, a NativeModule's functions); empty: the task's
  // built-ins. `target` is what the built-in loss gets: class indices
  // (int64 [batch]) or float targets ([batch, targets]).
  virtual LossFunction template_loss() { return {}; }
  virtual MetricsFunction template_metrics() { return {}; }
  // The model as a chain of its top-level children, in forward order, whose
  // links together own every parameter and buffer; or why it is no such
  // chain (invalid_argument). What pipeline stages split (models/pipeline.hpp).
  virtual Result<std::vector<ChainLink>> chain() {
    return Status::invalid_argument("this kind of model does not describe its forward as a chain of its children");
  }
};

// A native module as registered by C++ code: the module plus its forward.
struct NativeModule {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  // Optional: writes a TorchScript equivalent of `module` (same weights).
  std::function<Status(const std::string& path)> export_torchscript;
  // Optional: forward-time randomness hook (see Model::set_generator).
  std::function<void(const torch::Generator&)> set_generator;
  // Optional: a training template's own loss and metrics, replacing the task's
  // built-ins (see LossFunction, MetricsFunction).
  LossFunction loss;
  MetricsFunction metrics;
  // Optional: the module's forward as a chain of its top-level children (see
  // ChainLink); without it the model cannot be split into pipeline stages.
  std::function<std::vector<ChainLink>()> chain;
};

// Builds a module for `params` (already validated by the factory itself with
// the ParamReader it gets; it must read every key it accepts) and `shape`.
// Throw cerebro::Error for a mismatch with the data (e.g. cnn on flat rows).
using ModuleFactory = std::function<NativeModule(ParamReader& params, const DataShape& shape)>;

// Registers a model under `name` for the `model` hyper-parameter. Thread-safe.
// Registering an existing name replaces it; a registered name hides the zoo
// model of that name (mlp, cnn, resnet), whichever was registered first.
void register_model(const std::string& name, ModuleFactory factory);
// Every model name a config may use: registered and zoo models, sorted.
std::vector<std::string> registered_models();

// Builds the model a config names: a registered name, or a path ending in .pt
// (a scripted torch.nn.Module). Throws cerebro::Error naming the problem.
// Reads the model's own keys from `reader`; the caller checks unread keys.
std::unique_ptr<Model> build_model(const std::string& model, ParamReader& reader, const DataShape& shape);

// Writes a TorchScript file plain LibTorch loads (torch::jit::load) holding a
// copy of every parameter and buffer of `module` and the method `source`,
// e.g. "def forward(self, x):\n    return torch.addmm(self.fc_bias, x, self.fc_weight.t())\n".
// The attributes are named as in the module with '.' turned into '_'
// ("block.fc.weight" -> self.block_fc_weight). What NativeModule's
// export_torchscript usually calls; the zoo models export this way.
Status save_as_torchscript(torch::nn::Module& module, const std::string& type_name, const std::string& source,
                           const std::string& path);

// Wraps a native module (used by the registry; public for embedding).
std::unique_ptr<Model> wrap_native(NativeModule native);

}  // namespace cerebro::models
