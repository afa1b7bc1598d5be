#include "runtime/store/pipeline_state.hpp"

#include <cstdint>

#include <fmt/format.h>

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
    return Status::corruption(fmt::format("pipeline state: {} bytes follow the last of {} stages", state.size() - at,
                                          count));
  return stages;
}

}  // namespace cerebro
