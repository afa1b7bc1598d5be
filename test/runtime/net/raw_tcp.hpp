#pragma once
// Raw TCP clients for tests that speak below CAF: blocking loopback sockets
// and a wait for the other side to close.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cerebro::test {

// A connected socket, or -1.
inline int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(port);
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

inline bool send_bytes(int fd, const std::vector<unsigned char>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    auto sent = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    done += static_cast<size_t>(sent);
  }
  return true;
}

// Reads exactly `size` bytes; fewer when the peer closes or `seconds` pass.
inline std::vector<unsigned char> receive_bytes(int fd, size_t size, double seconds) {
  std::vector<unsigned char> out(size);
  size_t done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (done < size && std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd, POLLIN, 0};
    if (::poll(&watched, 1, 100) <= 0) continue;
    auto got = ::recv(fd, out.data() + done, size - done, 0);
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  out.resize(done);
  return out;
}

// True when the peer closes (EOF or reset) within `seconds`; bytes the peer
// sent before closing are read and dropped.
inline bool closed_within(int fd, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char sink[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd, POLLIN, 0};
    if (::poll(&watched, 1, 100) <= 0) continue;
    if (::recv(fd, sink, sizeof sink, 0) <= 0) return true;
  }
  return false;
}

// A BASP header (CAF 0.17 layout, big endian) with the given operation,
// payload length and operation data; the actor ids are 0.
inline std::vector<unsigned char> basp_header(uint8_t operation, uint32_t payload_len, uint64_t operation_data) {
  std::vector<unsigned char> h(32, 0);
  h[0] = operation;
  for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<unsigned char>(payload_len >> (24 - 8 * i));
  for (int i = 0; i < 8; ++i) h[8 + i] = static_cast<unsigned char>(operation_data >> (56 - 8 * i));
  return h;
}

}  // namespace cerebro::test
