#include "runtime/viz/tfrecord.hpp"

#include <array>

namespace cerebro {

namespace {

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    table[i] = crc;
  }
  return table;
}

void append_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const auto table = make_table();
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : bytes) crc = table[(crc ^ c) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord_frame(std::string_view data) {
  std::string length;
  uint64_t n = data.size();
  for (int i = 0; i < 8; ++i) length.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  std::string out = length;
  append_u32(out, masked_crc32c(length));
  out.append(data.data(), data.size());
  append_u32(out, masked_crc32c(data));
  return out;
}

}  // namespace cerebro
