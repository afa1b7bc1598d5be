#include "runtime/store/pipeline_state.hpp"

#include <cstdint>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/store/state_store.hpp"

namespace cerebro {

namespace {

const std::string kMagic = "cerebro-pipeline-state/1\n";

void put(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool get(const std::string& in, size_t& at, uint64_t& value, int bytes) {
  if (in.size() - at < static_cast<size_t>(bytes)) return false;
  value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += static_cast<size_t>(bytes);
  return true;
}

}  // namespace

std::string pack_stage_states(const std::vector<std::string>& stages) {
  size_t size = kMagic.size() + 4;
  for (const auto& s : stages) size += 8 + s.size();
  std::string out;
  out.reserve(size);
  out += kMagic;
  put(out, stages.size(), 4);
  for (const auto& s : stages) {
    put(out, s.size(), 8);
    out += s;
  }
  return out;
}

bool is_pipeline_state(const std::string& state) { return state.compare(0, kMagic.size(), kMagic) == 0; }

Result<std::vector<std::string>> unpack_stage_states(const std::string& state) {
  if (!is_pipeline_state(state))
    return Status::invalid_argument("the state is a whole model's, not a pipeline's stages (no pipeline header)");
  size_t at = kMagic.size();
  uint64_t count = 0;
  if (!get(state, at, count, 4) || count == 0)
    return Status::corruption("pipeline state: the stage count is missing or 0");
  std::vector<std::string> stages;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t length = 0;
    if (!get(state, at, length, 8) || state.size() - at < length)
      return Status::corruption(fmt::format("pipeline state: stage {} of {} is truncated", i, count));
    stages.push_back(state.substr(at, length));
    at += length;
  }
  if (at != state.size())
    return Status::corruption(
        fmt::format("pipeline state: {} bytes follow the last of {} stages", state.size() - at, count));
  return stages;
}

Result<int32_t> stage_count_of(const std::string& state) {
  if (!is_pipeline_state(state)) return 1;
  auto stages = unpack_stage_states(state);
  if (!stages.ok()) return stages.status();
  return static_cast<int32_t>(stages->size());
}

namespace {
const char* const kStagesMeta = "pipeline_stages";
std::mutex stages_meta_mutex;  // record_pipeline_stages' read, merge, write
}  // namespace

Result<std::map<ConfigId, int32_t>> stored_pipeline_stages(const StateStore& store) {
  std::map<ConfigId, int32_t> out;
  auto text = store.get_meta(kStagesMeta);
  if (!text) return out;
  const auto stages = nlohmann::json::parse(*text, nullptr, false);
  if (!stages.is_object()) return Status::corruption("the run's meta pipeline_stages is not a JSON object: " + *text);
  for (auto it = stages.begin(); it != stages.end(); ++it) {
    ConfigId config = -1;
    try {
      size_t used = 0;
      config = std::stoi(it.key(), &used);
      if (used != it.key().size()) config = -1;
    } catch (const std::exception&) {
    }
    if (config < 0 || !it.value().is_number_integer() || it.value().get<int64_t>() < 2 ||
        it.value().get<int64_t>() > 1 << 20)
      return Status::corruption(
          fmt::format("the run's meta pipeline_stages: bad entry \"{}\": {}", it.key(), it.value().dump()));
    out[config] = it.value().get<int32_t>();
  }
  return out;
}

Status record_pipeline_stages(StateStore& store, ConfigId config, int32_t stages) {
  if (stages < 2)
    return Status::invalid_argument(fmt::format("config {}: a pipeline has at least 2 stages, got {}", config, stages));
  std::lock_guard<std::mutex> lock(stages_meta_mutex);
  auto known = stored_pipeline_stages(store);
  if (!known.ok()) return known.status();
  (*known)[config] = stages;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [id, k] : *known) j[std::to_string(id)] = k;
  return store.put_meta(kStagesMeta, j.dump());
}

}  // namespace cerebro
