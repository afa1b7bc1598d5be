#include "runtime/base/checksum.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <zlib.h>

namespace cerebro {

Crc32& Crc32::update(const void* data, size_t bytes) {
  const auto* p = static_cast<const Bytef*>(data);
  while (bytes > 0) {  // crc32 takes a uInt length
    const auto step = static_cast<uInt>(std::min<size_t>(bytes, size_t{1} << 30));
    crc_ = static_cast<uint32_t>(::crc32(crc_, p, step));
    p += step;
    bytes -= step;
  }
  return *this;
}

std::string Crc32::text() const { return fmt::format("crc32:{:08x}", crc_); }

std::string checksum_of(std::string_view bytes) { return Crc32().update(bytes).text(); }

}  // namespace cerebro
