#pragma once
// A small protocol-buffers wire-format encoder (the documented encoding:
// https://protobuf.dev/programming-guides/encoding/), enough to write
// TensorBoard's Event and Summary messages without a code generator. Fields
// are appended in the order written; a nested message is encoded first and
// then added as a length-delimited field.

#include <cstdint>
#include <string>
#include <string_view>

namespace cerebro::proto {

class Message {
 public:
  // Wire type 0 (int32, int64, uint64, bool, enum). Negative values take ten
  // bytes, as protobuf encodes them.
  Message& varint(int field, uint64_t value);
  Message& int64(int field, int64_t value) { return varint(field, static_cast<uint64_t>(value)); }
  Message& boolean(int field, bool value) { return varint(field, value ? 1 : 0); }
  // Wire type 1 (double) and 5 (float), little-endian.
  Message& float64(int field, double value);
  Message& float32(int field, float value);
  // Wire type 2: strings, bytes and nested messages.
  Message& bytes(int field, std::string_view value);
  Message& message(int field, const Message& nested) { return bytes(field, nested.data_); }
  // A packed repeated float field (wire type 2 holding fixed32 values).
  Message& packed_floats(int field, const float* values, size_t count);

  const std::string& data() const { return data_; }

 private:
  void tag(int field, int wire_type);
  void raw_varint(uint64_t value);
  std::string data_;
};

}  // namespace cerebro::proto
