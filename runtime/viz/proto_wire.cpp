#include "runtime/viz/proto_wire.hpp"

#include <cstring>

namespace cerebro::proto {

namespace {

// The wire format is little-endian whatever the host is.
template <class Bits>
void append_little_endian(std::string& out, Bits bits) {
  for (size_t i = 0; i < sizeof(Bits); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

}  // namespace

void Message::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void Message::tag(int field, int wire_type) { raw_varint((static_cast<uint64_t>(field) << 3) | wire_type); }

Message& Message::varint(int field, uint64_t value) {
  tag(field, 0);
  raw_varint(value);
  return *this;
}

Message& Message::float64(int field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  tag(field, 1);
  append_little_endian(data_, bits);
  return *this;
}

Message& Message::float32(int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  tag(field, 5);
  append_little_endian(data_, bits);
  return *this;
}

Message& Message::bytes(int field, std::string_view value) {
  tag(field, 2);
  raw_varint(value.size());
  data_.append(value.data(), value.size());
  return *this;
}

Message& Message::packed_floats(int field, const float* values, size_t count) {
  std::string packed;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    append_little_endian(packed, bits);
  }
  return bytes(field, packed);
}

}  // namespace cerebro::proto
