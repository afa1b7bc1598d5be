#pragma once
// Follows the frame boundaries of a CAF 0.17 BASP byte stream so a relay can
// refuse an oversized frame from its header, before anyone allocates it.
//
// BASP frame (CAF 0.17.6, libcaf_io/caf/io/basp/header.hpp): a 32-byte header
// written by binary_serializer in network byte order, padding included:
//   operation u8, padding u8, padding u8, flags u8, payload_len u32,
//   operation_data u64, source_actor u64, dest_actor u64
// followed by payload_len bytes of payload.

#include <cstddef>
#include <cstdint>
#include <optional>

namespace cerebro {

inline constexpr size_t kBaspHeaderSize = 32;
inline constexpr size_t kBaspPayloadLenOffset = 4;

// payload_len of a complete header (big endian).
uint32_t basp_payload_len(const unsigned char* header);

class BaspFrameReader {
 public:
  explicit BaspFrameReader(uint64_t max_payload_bytes) : max_payload_bytes_(max_payload_bytes) {}

  // Consumes the next `size` bytes of the stream. Returns the claimed payload
  // length of the first header over the limit; the reader is then stuck (the
  // stream is to be closed). Payload bytes are skipped, never stored.
  std::optional<uint32_t> feed(const unsigned char* data, size_t size);

  // Complete frames seen so far (a header with no payload is a frame).
  uint64_t frames() const { return frames_; }

  // Payload bytes of the current frame still to come: a relay may pass that
  // many without showing them to the reader (splice), then call
  // skip_payload with the count it passed (at most payload_left()).
  uint64_t payload_left() const { return payload_left_; }
  void skip_payload(uint64_t bytes);

 private:
  uint64_t max_payload_bytes_;
  unsigned char header_[kBaspHeaderSize] = {};
  size_t header_filled_ = 0;
  uint64_t payload_left_ = 0;
  uint64_t frames_ = 0;
  std::optional<uint32_t> refused_;
};

}  // namespace cerebro
