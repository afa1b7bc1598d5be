// The model registry, the native-module adapter and TorchScript (.pt) models.
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include "models/model.hpp"
#include "models/template_fields.hpp"
#include "models/trainee_cache.hpp"
#include "models/zoo.hpp"

namespace cerebro::models {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// Models registered by users, and the zoo's; a user's name hides the zoo's.
std::map<std::string, ModuleFactory>& registry() {
  static std::map<std::string, ModuleFactory> r;
  return r;
}
std::map<std::string, ModuleFactory>& builtin_registry() {
  static std::map<std::string, ModuleFactory> r;
  return r;
}

// Every name, users' and zoo's, sorted and unique. Call with the lock held.
std::vector<std::string> all_names() {
  std::set<std::string> names;
  for (const auto& [name, f] : registry()) names.insert(name);
  for (const auto& [name, f] : builtin_registry()) names.insert(name);
  return {names.begin(), names.end()};
}

// The first parameter or buffer of `model_state` that no link of `links` owns ("" if none).
std::string first_unowned(const std::vector<std::pair<std::string, torch::Tensor>>& model_state,
                          const std::vector<ChainLink>& links) {
  std::set<const void*> owned;
  for (const auto& link : links) {
    for (const auto& [name, t] : link.parameters) owned.insert(t.unsafeGetTensorImpl());
    for (const auto& [name, t] : link.buffers) owned.insert(t.unsafeGetTensorImpl());
  }
  for (const auto& [name, t] : model_state)
    if (!owned.count(t.unsafeGetTensorImpl())) return name;
  return "";
}

class NativeModel final : public Model {
 public:
  explicit NativeModel(NativeModule native) : native_(std::move(native)) {}
  torch::Tensor forward(const torch::Tensor& input) override { return native_.forward(input); }
  std::vector<torch::Tensor> parameters() override { return native_.module->parameters(); }
  std::vector<std::pair<std::string, torch::Tensor>> named_state() override {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& p : native_.module->named_parameters()) out.emplace_back(p.key(), p.value());
    for (const auto& b : native_.module->named_buffers()) out.emplace_back(b.key(), b.value());
    return out;
  }
  void set_training(bool on) override { native_.module->train(on); }
  void set_generator(const torch::Generator& g) override {
    if (native_.set_generator) native_.set_generator(g);
  }
  Status export_torchscript(const std::string& path) override {
    if (!native_.export_torchscript)
      return Status::failed_precondition("this model was registered without a TorchScript exporter");
    return native_.export_torchscript(path);
  }
  LossFunction template_loss() override { return native_.loss; }
  MetricsFunction template_metrics() override { return native_.metrics; }
  std::string unowned_state(const std::vector<ChainLink>& links) { return first_unowned(named_state(), links); }
  Result<std::vector<ChainLink>> chain() override {
    if (!native_.chain)
      return Status::invalid_argument(
          "it was registered without a chain of its top-level children (NativeModule::chain)");
    auto links = native_.chain();
    if (auto missing = unowned_state(links); !missing.empty())
      return Status::invalid_argument(fmt::format("its chain leaves {} out of every link", missing));
    return links;
  }

 private:
  NativeModule native_;
};

// A scripted torch.nn.Module saved from Python (torch.jit.script(m).save(path)).
class ScriptModel final : public Model {
 public:
  ScriptModel(torch::jit::Module module, DataShape shape) : module_(std::move(module)), shape_(std::move(shape)) {
    for (auto p : module_.parameters()) p.set_requires_grad(true);
    fields_in_ = takes_fields("forward", 1);
    fields_target_ = takes_fields("loss", 2) || takes_fields("metrics", 2);
  }
  torch::Tensor forward(const torch::Tensor& input) override {
    auto out = fields_in_ ? module_.forward({input_fields(shape_, input)}) : module_.forward({input});
    if (!out.isTensor()) throw Error("the TorchScript module's forward must return one Tensor");
    return out.toTensor();
  }
  std::vector<torch::Tensor> parameters() override {
    std::vector<torch::Tensor> out;
    for (auto p : module_.parameters()) out.push_back(p);
    return out;
  }
  std::vector<std::pair<std::string, torch::Tensor>> named_state() override {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& p : module_.named_parameters()) out.emplace_back(p.name, p.value);
    for (const auto& b : module_.named_buffers()) out.emplace_back(b.name, b.value);
    return out;
  }
  void set_training(bool on) override { module_.train(on); }
  Status export_torchscript(const std::string& path) override {
    try {
      module_.save(path);
      return Status::ok_status();
    } catch (const c10::Error& e) {
      return Status::invalid_argument(fmt::format("{}: {}", path, e.what_without_backtrace()));
    }
  }
  // A chain when forward only calls each child's forward, in turn, on the
  // previous child's output and returns the last one's (a scripted
  // torch.nn.Sequential, or a module written that way).
  Result<std::vector<ChainLink>> chain() override {
    auto refuse = [](const std::string& why) { return Status::invalid_argument("the TorchScript module" + why); };
    std::set<std::string> children;
    std::map<std::string, torch::jit::Module> child_modules;
    for (const auto& child : module_.named_children()) {
      children.insert(child.name);
      child_modules.emplace(child.name, child.value);
    }
    for (const auto& p : module_.named_parameters(false))
      return refuse(fmt::format(" has a parameter of its own ({}) outside its children", p.name));
    for (const auto& b : module_.named_buffers(false))
      return refuse(fmt::format(" has a buffer of its own ({}) outside its children", b.name));
    auto graph = module_.get_method("forward").graph();
    if (graph->inputs().size() != 2)
      return refuse(fmt::format("'s forward takes {} arguments; a chain takes one tensor", graph->inputs().size() - 1));
    const torch::jit::Value* self = graph->inputs()[0];
    const torch::jit::Value* current = graph->inputs()[1];
    std::map<const torch::jit::Value*, std::string> child_of;
    std::vector<std::string> order;
    for (torch::jit::Node* node : graph->nodes()) {
      if (node->kind() == c10::prim::GetAttr && node->input(0) == self && children.count(node->s(c10::attr::name))) {
        child_of[node->output()] = node->s(c10::attr::name);
        continue;
      }
      if (node->kind() == c10::prim::CallMethod && node->s(c10::attr::name) == "forward" &&
          node->inputs().size() == 2 && child_of.count(node->input(0)) && node->input(1) == current) {
        order.push_back(child_of[node->input(0)]);
        current = node->output();
        continue;
      }
      // A constant computes nothing; a node that uses one is refused below.
      if (node->kind() == c10::prim::Constant) continue;
      return refuse(
          fmt::format("'s forward is not a plain chain of its children: it computes {} (a chain only calls "
                      "each child's forward on the previous child's output)",
                      node->kind().toQualString()));
    }
    if (graph->outputs().size() != 1 || graph->outputs()[0] != current)
      return refuse("'s forward does not return the last child's output");
    std::set<std::string> called(order.begin(), order.end());
    if (called.size() != order.size()) return refuse("'s forward calls a child twice");
    for (const auto& name : children)
      if (!called.count(name)) return refuse(fmt::format("'s forward never calls its child {}", name));
    std::vector<ChainLink> links;
    for (const auto& name : order) {
      torch::jit::Module child = child_modules.at(name);
      ChainLink link;
      link.name = name;
      link.forward = [child](const torch::Tensor& x) mutable {
        auto out = child.forward({x});
        if (!out.isTensor()) throw Error("a chained child's forward must return one Tensor");
        return out.toTensor();
      };
      for (const auto& p : child.named_parameters()) link.parameters.emplace_back(name + "." + p.name, p.value);
      for (const auto& b : child.named_buffers()) link.buffers.emplace_back(name + "." + b.name, b.value);
      link.set_training = [child](bool on) mutable { child.train(on); };
      links.push_back(std::move(link));
    }
    return links;
  }
  LossFunction template_loss() override {
    if (!module_.find_method("loss")) return {};
    return [this](const torch::Tensor& output, const torch::Tensor& target) {
      auto value = module_.get_method("loss")({output, target_of(target)});
      if (!value.isTensor())
        throw Error("the TorchScript module's loss(output, target) must return a Tensor, got " + value.tagKind());
      return value.toTensor();
    };
  }
  MetricsFunction template_metrics() override {
    if (!module_.find_method("metrics")) return {};
    return [this](const torch::Tensor& output, const torch::Tensor& target) {
      auto value = module_.get_method("metrics")({output, target_of(target)});
      if (!value.isGenericDict())
        throw Error("the TorchScript module's metrics(output, target) must return a Dict[str, Tensor], got " +
                    value.tagKind());
      std::map<std::string, torch::Tensor> out;
      for (const auto& item : value.toGenericDict()) {
        if (!item.key().isString() || !item.value().isTensor())
          throw Error("the TorchScript module's metrics(output, target) must return a Dict[str, Tensor]");
        out[item.key().toStringRef()] = item.value().toTensor();
      }
      return out;
    };
  }

 private:
  // Whether `method`'s argument `index` (self is 0) is a Dict: the template takes the task's fields.
  bool takes_fields(const std::string& method, size_t index) const {
    auto found = module_.find_method(method);
    if (!found) return false;
    const auto& arguments = found->function().getSchema().arguments();
    return arguments.size() > index && arguments[index].type()->kind() == c10::TypeKind::DictType;
  }
  c10::IValue target_of(const torch::Tensor& target) const {
    if (fields_target_) return target_fields(shape_, target);
    return target;
  }

  torch::jit::Module module_;
  DataShape shape_;
  bool fields_in_ = false, fields_target_ = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::unique_ptr<Model> load_script_model(const std::string& path, const DataShape& shape) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ParamError(fmt::format("model file {} does not exist", path));
  try {
    return std::make_unique<ScriptModel>(torch::jit::load(path), shape);
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    throw ParamError(
        fmt::format("model file {} is not a TorchScript module (save it from Python with "
                    "torch.jit.script(module).save(path)): {}",
                    path, why.substr(0, why.find('\n'))));
  }
}

}  // namespace

void register_model(const std::string& name, ModuleFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[name] = std::move(factory);
}

void register_builtin_model(const std::string& name, ModuleFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  builtin_registry()[name] = std::move(factory);
}

bool is_builtin_model(const std::string& model) {
  register_zoo_models();
  std::lock_guard<std::mutex> lock(registry_mutex());
  return !registry().count(model) && builtin_registry().count(model);
}

std::vector<std::string> registered_models() {
  register_zoo_models();
  std::lock_guard<std::mutex> lock(registry_mutex());
  return all_names();
}

Status save_as_torchscript(torch::nn::Module& module, const std::string& type_name, const std::string& source,
                           const std::string& path) {
  auto attribute = [](std::string name) {
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
  };
  try {
    torch::NoGradGuard no_grad;
    torch::jit::Module script(type_name);
    for (const auto& item : module.named_parameters())
      script.register_parameter(attribute(item.key()), item.value().detach().clone(), false);
    for (const auto& item : module.named_buffers())
      script.register_buffer(attribute(item.key()), item.value().detach().clone());
    script.define(source);
    script.eval();
    script.save(path);
    return Status::ok_status();
  } catch (const c10::Error& e) {
    return Status::invalid_argument(fmt::format("{}: TorchScript export failed: {}", path, e.what_without_backtrace()));
  } catch (const std::exception& e) {  // a syntax or type error in `source` (torch::jit::ErrorReport)
    return Status::invalid_argument(fmt::format("{}: TorchScript export failed: {}", path, e.what()));
  }
}

ChainLink chain_link(std::string name, std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> parts,
                     std::function<torch::Tensor(const torch::Tensor&)> forward,
                     std::function<void(const torch::Generator&)> set_generator) {
  ChainLink link;
  link.name = std::move(name);
  link.forward = std::move(forward);
  link.set_generator = std::move(set_generator);
  for (const auto& [part, module] : parts) {
    for (const auto& p : module->named_parameters()) link.parameters.emplace_back(part + "." + p.key(), p.value());
    for (const auto& b : module->named_buffers()) link.buffers.emplace_back(part + "." + b.key(), b.value());
  }
  link.set_training = [parts](bool on) {
    for (const auto& part : parts) part.second->train(on);
  };
  return link;
}

std::unique_ptr<Model> wrap_native(NativeModule native) {
  if (!native.module || !native.forward) throw Error("a registered model returned no module or no forward");
  return std::make_unique<NativeModel>(std::move(native));
}

std::unique_ptr<Model> build_model(const std::string& model, ParamReader& reader, const DataShape& shape) {
  if (ends_with(model, ".pt")) return load_script_model(model, shape);
  register_zoo_models();
  ModuleFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (auto* models : {&registry(), &builtin_registry()}) {
      auto it = models->find(model);
      if (it != models->end()) {
        factory = it->second;
        break;
      }
    }
    if (!factory)
      throw ParamError(fmt::format("unknown model \"{}\": registered models are {}, or give a TorchScript .pt file",
                                   model, fmt::join(all_names(), ", ")));
  }
  try {
    return wrap_native(factory(reader, shape));
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    throw Error(fmt::format("{}: cannot be built for samples of shape [{}]: {}", model,
                            fmt::join(shape.sample_shape, ", "), why.substr(0, why.find('\n'))));
  }
}

}  // namespace cerebro::models
