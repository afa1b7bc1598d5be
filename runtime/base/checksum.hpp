#pragma once
// The project's one checksum: zlib's crc32, written "crc32:xxxxxxxx" (eight
// lower-case hex digits). Model states in the state store and dataset shards
// both carry it, so the text must never change: stores and shards written
// before must still verify.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cerebro {

// A running crc32 over pieces of any length (zlib takes at most 4 GiB per
// call; this feeds it in chunks, with the same result as one call).
class Crc32 {
 public:
  Crc32& update(const void* data, size_t bytes);
  Crc32& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  uint32_t value() const { return crc_; }
  // "crc32:xxxxxxxx"
  std::string text() const;

 private:
  uint32_t crc_ = 0;  // crc32 of no bytes
};

// crc32 of bytes, as "crc32:xxxxxxxx".
std::string checksum_of(std::string_view bytes);

}  // namespace cerebro
