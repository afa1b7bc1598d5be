#include "runtime/net/basp_frame_reader.hpp"

#include <algorithm>
#include <cstring>

namespace cerebro {

uint32_t basp_payload_len(const unsigned char* header) {
  const unsigned char* p = header + kBaspPayloadLenOffset;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void BaspFrameReader::skip_payload(uint64_t bytes) {
  bytes = std::min(bytes, payload_left_);
  if (bytes == 0) return;
  payload_left_ -= bytes;
  if (payload_left_ == 0) ++frames_;
}

std::optional<uint32_t> BaspFrameReader::feed(const unsigned char* data, size_t size) {
  while (size > 0 && !refused_) {
    if (payload_left_ > 0) {
      auto skipped = static_cast<size_t>(std::min<uint64_t>(payload_left_, size));
      payload_left_ -= skipped;
      data += skipped, size -= skipped;
      if (payload_left_ == 0) ++frames_;
      continue;
    }
    auto copied = std::min(kBaspHeaderSize - header_filled_, size);
    std::memcpy(header_ + header_filled_, data, copied);
    header_filled_ += copied;
    data += copied, size -= copied;
    if (header_filled_ < kBaspHeaderSize) break;
    header_filled_ = 0;
    auto claimed = basp_payload_len(header_);
    if (claimed > max_payload_bytes_)
      refused_ = claimed;
    else if (claimed == 0)
      ++frames_;
    else
      payload_left_ = claimed;
  }
  return refused_;
}

}  // namespace cerebro
