// The state format of our own: raw tensors, a small header, a CRC-32
// (models/state_format.hpp has the layout and why).
#include "models/state_format.hpp"

#include <cstring>

#include <fmt/format.h>

#include "runtime/base/checksum.hpp"

namespace cerebro::models::detail {

namespace {

enum class OptimizerKind : uint32_t { adam = 1, adamw = 2, sgd = 3 };

// Which kind `o` is (the dynamic type of its parameter state tells nothing
// before the first step, so ask the optimizer itself).
std::optional<OptimizerKind> kind_of(const torch::optim::Optimizer& o) {
  if (dynamic_cast<const torch::optim::AdamW*>(&o)) return OptimizerKind::adamw;
  if (dynamic_cast<const torch::optim::Adam*>(&o)) return OptimizerKind::adam;
  if (dynamic_cast<const torch::optim::SGD*>(&o)) return OptimizerKind::sgd;
  return std::nullopt;
}

const char* name_of(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::adam: return "adam";
    case OptimizerKind::adamw: return "adamw";
    case OptimizerKind::sgd: return "sgd";
  }
  return "unknown";
}

std::string key_of(const torch::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); }

// The stored tensors of one parameter's optimizer state, in field order
// (undefined: absent), and the step for adam/adamw.
struct ParamFields {
  int64_t step = 0;
  std::vector<torch::Tensor> tensors;
};

const char* const kAdamFields[] = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
const char* const kSgdFields[] = {"momentum_buffer"};

ParamFields fields_of(OptimizerKind kind, torch::optim::OptimizerParamState& s) {
  ParamFields f;
  if (kind == OptimizerKind::sgd) {
    f.tensors = {static_cast<torch::optim::SGDParamState&>(s).momentum_buffer()};
  } else if (kind == OptimizerKind::adamw) {
    auto& a = static_cast<torch::optim::AdamWParamState&>(s);
    f.step = a.step();
    f.tensors = {a.exp_avg(), a.exp_avg_sq(), a.max_exp_avg_sq()};
  } else {
    auto& a = static_cast<torch::optim::AdamParamState&>(s);
    f.step = a.step();
    f.tensors = {a.exp_avg(), a.exp_avg_sq(), a.max_exp_avg_sq()};
  }
  return f;
}

std::unique_ptr<torch::optim::OptimizerParamState> state_of(OptimizerKind kind, ParamFields f) {
  if (kind == OptimizerKind::sgd) {
    auto s = std::make_unique<torch::optim::SGDParamState>();
    s->momentum_buffer(f.tensors[0]);
    return s;
  }
  if (kind == OptimizerKind::adamw) {
    auto s = std::make_unique<torch::optim::AdamWParamState>();
    s->step(f.step).exp_avg(f.tensors[0]).exp_avg_sq(f.tensors[1]).max_exp_avg_sq(f.tensors[2]);
    return s;
  }
  auto s = std::make_unique<torch::optim::AdamParamState>();
  s->step(f.step).exp_avg(f.tensors[0]).exp_avg_sq(f.tensors[1]).max_exp_avg_sq(f.tensors[2]);
  return s;
}

size_t field_count(OptimizerKind kind) { return kind == OptimizerKind::sgd ? 1 : 3; }

size_t record_bytes(const torch::Tensor& t) { return 1 + 1 + 8 * static_cast<size_t>(t.dim()) + t.nbytes(); }

class Writer {
 public:
  explicit Writer(size_t bytes) { out_.reserve(bytes); }
  template <class T>
  void put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void tensor(const torch::Tensor& t) {
    auto c = t.detach().contiguous();
    if (c.dim() > 255) throw Error("a state tensor has more than 255 dimensions", StatusCode::internal);
    put(static_cast<int8_t>(c.scalar_type()));
    put(static_cast<uint8_t>(c.dim()));
    for (int64_t d : c.sizes()) put(d);
    out_.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  }
  std::string finish() {
    put(Crc32().update(out_).value());
    return std::move(out_);
  }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // The next tensor record as a tensor that views the bytes (copy before they go).
  torch::Tensor tensor() {
    auto type = static_cast<c10::ScalarType>(get<int8_t>());
    if (static_cast<int>(type) < 0 || type >= c10::ScalarType::NumOptions)
      throw Error("stored state: unknown tensor type", StatusCode::corruption);
    std::vector<int64_t> sizes(get<uint8_t>());
    int64_t numel = 1;
    for (auto& d : sizes) {
      d = get<int64_t>();
      if (d < 0) throw Error("stored state: negative tensor size", StatusCode::corruption);
      numel *= d;
    }
    size_t bytes = static_cast<size_t>(numel) * c10::elementSize(type);
    need(bytes);
    auto t = torch::from_blob(const_cast<char*>(bytes_.data() + at_), sizes, torch::TensorOptions().dtype(type));
    at_ += bytes;
    return t;
  }
  void expect_end() const {
    if (at_ != bytes_.size())
      throw Error(fmt::format("stored state: {} bytes after its end", bytes_.size() - at_), StatusCode::corruption);
  }

 private:
  void need(size_t n) const {
    if (bytes_.size() - at_ < n) throw Error("stored state is truncated", StatusCode::corruption);
  }
  std::string_view bytes_;
  size_t at_ = 0;
};

// Checks the trailer and the header; returns a reader past the header.
Reader open(std::string_view bytes, OptimizerKind& kind) {
  if (!is_raw_state(bytes) || bytes.size() < kRawStateMagic.size() + 12)
    throw Error("stored state is not in cerebro's state format", StatusCode::corruption);
  auto body = bytes.substr(0, bytes.size() - 4);
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + body.size(), 4);
  auto actual = Crc32().update(body).value();
  if (stored != actual)
    throw Error(fmt::format("stored state checksum {:08x} does not match its content ({:08x})", stored, actual),
                StatusCode::corruption);
  Reader r(body.substr(kRawStateMagic.size()));
  if (auto v = r.get<uint32_t>(); v != kRawStateVersion)
    throw Error(fmt::format("stored state has format version {}, this build reads {}", v, kRawStateVersion),
                StatusCode::invalid_argument);
  auto k = r.get<uint32_t>();
  if (k < 1 || k > 3)
    throw Error(fmt::format("stored state has an unknown optimizer kind {}", k), StatusCode::invalid_argument);
  kind = static_cast<OptimizerKind>(k);
  return r;
}

}  // namespace

bool is_raw_state(std::string_view bytes) { return bytes.substr(0, kRawStateMagic.size()) == kRawStateMagic; }

bool raw_state_supports(const torch::optim::Optimizer& optimizer) { return kind_of(optimizer).has_value(); }

std::string save_raw_state(Model& model, torch::optim::Optimizer& optimizer) {
  auto kind = kind_of(optimizer);
  if (!kind) throw Error("this optimizer's state has no raw format", StatusCode::internal);
  auto named = model.named_state();
  auto& states = optimizer.state();
  // Sized exactly first: one allocation, no regrowing.
  size_t bytes = kRawStateMagic.size() + 4 + 4 + 8 + 8 + 4;
  for (const auto& [name, t] : named) bytes += record_bytes(t);
  std::vector<std::vector<std::optional<ParamFields>>> groups;
  for (auto& group : optimizer.param_groups()) {
    bytes += 8;
    auto& fields = groups.emplace_back();
    for (const auto& p : group.params()) {
      bytes += 1;
      auto it = states.find(key_of(p));
      if (it == states.end()) {
        fields.emplace_back();
        continue;
      }
      auto f = fields_of(*kind, *it->second);
      bytes += (*kind == OptimizerKind::sgd ? 0 : 8) + 1;
      for (const auto& t : f.tensors)
        if (t.defined()) bytes += record_bytes(t);
      fields.emplace_back(std::move(f));
    }
  }
  Writer w(bytes);
  for (char c : kRawStateMagic) w.put(c);
  w.put(kRawStateVersion);
  w.put(static_cast<uint32_t>(*kind));
  w.put(static_cast<uint64_t>(named.size()));
  for (const auto& [name, t] : named) w.tensor(t);
  w.put(static_cast<uint64_t>(groups.size()));
  for (const auto& fields : groups) {
    w.put(static_cast<uint64_t>(fields.size()));
    for (const auto& f : fields) {
      w.put(static_cast<uint8_t>(f.has_value()));
      if (!f) continue;
      if (*kind != OptimizerKind::sgd) w.put(f->step);
      uint8_t present = 0;
      for (size_t i = 0; i < f->tensors.size(); ++i)
        if (f->tensors[i].defined()) present |= static_cast<uint8_t>(1u << i);
      w.put(present);
      for (const auto& t : f->tensors)
        if (t.defined()) w.tensor(t);
    }
  }
  return w.finish();
}

namespace {

// Reads a parameter's stored optimizer fields (copies, owning their memory).
ParamFields read_fields(Reader& r, OptimizerKind kind) {
  ParamFields f;
  if (kind != OptimizerKind::sgd) f.step = r.get<int64_t>();
  auto present = r.get<uint8_t>();
  for (size_t i = 0; i < field_count(kind); ++i)
    f.tensors.push_back(present & (1u << i) ? r.tensor().clone() : torch::Tensor());
  return f;
}

}  // namespace

void restore_raw_state(Model& model, torch::optim::Optimizer& optimizer, std::string_view bytes) {
  OptimizerKind kind;
  Reader r = open(bytes, kind);
  auto mine = kind_of(optimizer);
  if (!mine || *mine != kind)
    throw Error(fmt::format("stored state is of a {} optimizer, the config's is {}", name_of(kind),
                            mine ? name_of(*mine) : "another kind"),
                StatusCode::invalid_argument);
  auto named = model.named_state();
  auto count = r.get<uint64_t>();
  if (count != named.size())
    throw Error(fmt::format("stored state has {} tensors, the model has {}", count, named.size()),
                StatusCode::invalid_argument);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < named.size(); ++i) {
    auto stored = r.tensor();
    auto& t = named[i].second;
    if (!stored.sizes().equals(t.sizes()) || stored.scalar_type() != t.scalar_type())
      throw Error(fmt::format("stored state tensor {} ({}) has the wrong shape or type", i, named[i].first),
                  StatusCode::invalid_argument);
    t.copy_(stored);
  }
  auto& groups = optimizer.param_groups();
  if (r.get<uint64_t>() != groups.size())
    throw Error("stored state has another number of parameter groups", StatusCode::invalid_argument);
  // Read everything before touching the optimizer: a bad state leaves it as it was.
  std::vector<std::pair<std::string, ParamFields>> loaded;
  for (auto& group : groups) {
    if (r.get<uint64_t>() != group.params().size())
      throw Error("stored state has another number of parameters in a parameter group", StatusCode::invalid_argument);
    for (const auto& p : group.params()) {
      if (!r.get<uint8_t>()) continue;
      auto f = read_fields(r, kind);
      for (const auto& t : f.tensors)
        if (t.defined() && !t.sizes().equals(p.sizes()))
          throw Error("stored optimizer state does not match its parameter's shape", StatusCode::invalid_argument);
      loaded.emplace_back(key_of(p), std::move(f));
    }
  }
  r.expect_end();
  auto& states = optimizer.state();
  states.clear();
  for (auto& [key, f] : loaded) states[key] = state_of(kind, std::move(f));
}

RawStateTensors decode_raw_state(std::string_view bytes) {
  OptimizerKind kind;
  Reader r = open(bytes, kind);
  RawStateTensors out;
  auto count = r.get<uint64_t>();
  out.tensors.emplace_back("model/count", torch::tensor(static_cast<int64_t>(count)));  // as an archive has it
  for (uint64_t i = 0; i < count; ++i) out.tensors.emplace_back(fmt::format("model/s{}", i), r.tensor().clone());
  auto groups = r.get<uint64_t>();
  for (uint64_t g = 0; g < groups; ++g) {
    auto params = r.get<uint64_t>();
    for (uint64_t i = 0; i < params; ++i) {
      ++out.parameters;
      if (!r.get<uint8_t>()) continue;
      ++out.parameters_with_optimizer_state;
      auto f = read_fields(r, kind);
      auto prefix = fmt::format("optimizer/group{}/param{}/", g, i);
      if (kind != OptimizerKind::sgd) out.tensors.emplace_back(prefix + "step", torch::tensor(f.step));
      for (size_t k = 0; k < f.tensors.size(); ++k) {
        if (!f.tensors[k].defined()) continue;
        out.tensors.emplace_back(prefix + (kind == OptimizerKind::sgd ? kSgdFields[k] : kAdamFields[k]), f.tensors[k]);
      }
    }
  }
  r.expect_end();
  return out;
}

}  // namespace cerebro::models::detail
