#pragma once
// TFRecord framing, as TensorFlow's record writer lays records out in an
// event file: for each record
//   uint64 length (little-endian)
//   uint32 masked CRC-32C of those 8 length bytes
//   length bytes of data
//   uint32 masked CRC-32C of the data
// The mask is ((crc >> 15) | (crc << 17)) + 0xa282ead8 (TensorFlow's
// crc32c::Mask), so a CRC of data that itself holds CRCs stays meaningful.

#include <cstdint>
#include <string>
#include <string_view>

namespace cerebro {

// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as in iSCSI and
// TensorFlow: crc32c("123456789") == 0xe3069283.
uint32_t crc32c(std::string_view bytes);

// TensorFlow's masked form of a CRC-32C.
uint32_t masked_crc32c(std::string_view bytes);

// One framed record holding `data`.
std::string tfrecord_frame(std::string_view data);

}  // namespace cerebro
