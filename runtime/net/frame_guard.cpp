#include "runtime/net/frame_guard.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runtime/net/basp_frame_reader.hpp"

namespace cerebro {

namespace {

// Large enough that a 10 MB model state crosses in few system calls.
constexpr size_t kRelayChunk = 256 * 1024;
// How often the acceptor reaps finished relays when no one connects.
constexpr int kReapIntervalMs = 1000;

std::string errno_text(int error) { return std::strerror(error); }

std::string numeric_address(const sockaddr* address, socklen_t length) {
  char host[NI_MAXHOST] = {}, service[NI_MAXSERV] = {};
  if (getnameinfo(address, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "unknown peer";
  return std::string(host).find(':') == std::string::npos ? fmt::format("{}:{}", host, service)
                                                          : fmt::format("[{}]:{}", host, service);
}

// Relayed messages are small requests as well as large states: do not let
// Nagle delay the small ones (CAF's own sockets do the same).
void set_no_delay(int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

bool send_all(int fd, const unsigned char* data, size_t size) {
  while (size > 0) {
    auto sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent, size -= static_cast<size_t>(sent);
  }
  return true;
}

Result<int> connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::io_error(errno_text(errno));
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(port);
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
    auto error = errno;
    ::close(fd);
    return Status::unavailable(errno_text(error));  // the backend is not listening (yet)
  }
  set_no_delay(fd);
  return fd;
}

// Payloads at least this long are spliced; shorter ones are copied with
// their headers (one recv instead of a header read plus two splices).
constexpr uint64_t kSpliceMin = 64 * 1024;
constexpr size_t kSpliceChunk = 1024 * 1024;

// A pipe to splice(2) socket bytes through. move() returns the bytes moved
// (> 0), 0 at the end of the stream or when the destination failed, and -1
// when splicing is not supported (usable() is false from then on, with no
// byte lost: a failure to splice in reads nothing).
class Splicer {
 public:
  Splicer() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    read_end_ = fds[0], write_end_ = fds[1];
    ::fcntl(write_end_, F_SETPIPE_SZ, static_cast<int>(kSpliceChunk));  // best effort: else 64 KB
  }
  ~Splicer() {
    if (read_end_ >= 0) ::close(read_end_);
    if (write_end_ >= 0) ::close(write_end_);
  }
  Splicer(const Splicer&) = delete;
  Splicer& operator=(const Splicer&) = delete;
  bool usable() const { return read_end_ >= 0 && !unsupported_; }

  ssize_t move(int from, int to, size_t bytes) {
    ssize_t in;
    do in = ::splice(from, nullptr, write_end_, nullptr, bytes, SPLICE_F_MOVE);
    while (in < 0 && errno == EINTR);
    if (in < 0 && (errno == EINVAL || errno == ENOSYS)) {
      unsupported_ = true;
      return -1;
    }
    if (in <= 0) return 0;
    // Drain the pipe completely: the reader's count and the stream must agree.
    for (ssize_t left = in; left > 0;) {
      auto out = ::splice(read_end_, nullptr, to, nullptr, static_cast<size_t>(left), SPLICE_F_MOVE);
      if (out < 0 && errno == EINTR) continue;
      if (out <= 0) return 0;
      left -= out;
    }
    return in;
  }

 private:
  int read_end_ = -1, write_end_ = -1;
  bool unsupported_ = false;
};

}  // namespace

// One accepted connection and its link to the middleman. Either side ending
// (or a refused frame) shuts both sockets down, which ends both pumps; the
// acceptor closes the descriptors only after joining them, so a descriptor
// number is never reused while a pump still holds it.
struct Relay {
  int peer_fd = -1;
  int inner_fd = -1;
  std::string peer;
  std::thread inbound;   // peer -> coordinator, frame headers checked
  std::thread outbound;  // coordinator -> peer, passed as is
  std::atomic<int> pumps_running{2};

  void shut_down() const {
    ::shutdown(peer_fd, SHUT_RDWR);
    ::shutdown(inner_fd, SHUT_RDWR);
  }
  bool finished() const { return pumps_running.load() == 0; }
  void join_and_close() {
    inbound.join();
    outbound.join();
    ::close(peer_fd);
    ::close(inner_fd);
  }
};

struct FrameGuard::Impl {
  FrameGuardConfig config;
  FrameGuardLog log;
  int listen_fd = -1;
  int wake_fd = -1;  // eventfd: the destructor asks the acceptor to stop
  uint16_t port = 0;
  std::thread acceptor;
  std::list<Relay> relays;  // touched by the acceptor only, then by the destructor

  ~Impl() {
    if (acceptor.joinable()) {
      uint64_t one = 1;
      [[maybe_unused]] auto written = ::write(wake_fd, &one, sizeof one);
      acceptor.join();
    }
    for (auto& relay : relays) relay.shut_down();
    for (auto& relay : relays) relay.join_and_close();
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  // Moves bytes from -> to. Payloads go through a pipe with splice(2): the
  // kernel moves the pages, this process never copies them (a 10 MB state
  // crossed the guard as 40 recv/send copies of 256 KB before). Bytes the
  // reader must see (frame headers, small frames) are copied through
  // `buffer` as before. Without a reader (coordinator -> peer) everything is
  // spliced.
  void pump(Relay& relay, int from, int to, BaspFrameReader* reader) {
    // splice(2) has no MSG_NOSIGNAL: writing to a peer that left must fail
    // with EPIPE, not raise a SIGPIPE that ends the process. Blocked in this
    // thread only, so the signal stays pending here and is never delivered.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    std::vector<unsigned char> buffer(kRelayChunk);
    Splicer splicer;
    for (;;) {
      bool spliced_payload = reader && reader->payload_left() >= kSpliceMin;
      if (splicer.usable() && (!reader || spliced_payload)) {
        size_t want =
            reader ? static_cast<size_t>(std::min<uint64_t>(reader->payload_left(), kSpliceChunk)) : kSpliceChunk;
        auto moved = splicer.move(from, to, want);
        if (moved > 0) {
          if (reader) reader->skip_payload(static_cast<uint64_t>(moved));
          continue;
        }
        if (moved == 0) break;  // end of stream or a failed write
        continue;               // splice unsupported here: copy from now on
      }
      auto received = ::recv(from, buffer.data(), buffer.size(), 0);
      if (received < 0 && errno == EINTR) continue;
      if (received <= 0) break;
      auto size = static_cast<size_t>(received);
      if (reader) {
        if (auto claimed = reader->feed(buffer.data(), size)) {
          log(
              fmt::format("frame guard: refused a message of {} bytes from {} (limit {} bytes, "
                          "--max-message-mb); closed the connection",
                          *claimed, relay.peer, config.max_payload_bytes));
          break;
        }
      }
      if (!send_all(to, buffer.data(), size)) break;
    }
    relay.shut_down();
    --relay.pumps_running;
  }

  void reap_finished() {
    for (auto it = relays.begin(); it != relays.end();) {
      if (!it->finished()) {
        ++it;
        continue;
      }
      it->join_and_close();
      it = relays.erase(it);
    }
  }

  void accept_one() {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    int peer_fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC);
    if (peer_fd < 0) return;  // the peer left before we took it, or out of descriptors: keep serving
    auto peer = numeric_address(reinterpret_cast<sockaddr*>(&address), length);
    auto inner = connect_loopback(config.target_port);
    if (!inner.ok()) {
      log(fmt::format("frame guard: cannot reach the coordinator on 127.0.0.1:{} for {}: {}", config.target_port, peer,
                      inner.error()));
      ::close(peer_fd);
      return;
    }
    set_no_delay(peer_fd);
    auto& relay = relays.emplace_back();
    relay.peer_fd = peer_fd;
    relay.inner_fd = *inner;
    relay.peer = std::move(peer);
    relay.inbound = std::thread([this, &relay] {
      BaspFrameReader reader(config.max_payload_bytes);
      pump(relay, relay.peer_fd, relay.inner_fd, &reader);
    });
    relay.outbound = std::thread([this, &relay] { pump(relay, relay.inner_fd, relay.peer_fd, nullptr); });
  }

  void accept_loop() {
    for (;;) {
      pollfd watched[2] = {{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      auto ready = ::poll(watched, 2, kReapIntervalMs);
      if (ready < 0 && errno != EINTR) return;
      if (watched[1].revents != 0) return;
      if (watched[0].revents & POLLIN) accept_one();
      reap_finished();
    }
  }
};

namespace {

// Binds the first address `host` resolves to; the error is the reason only.
Result<int> bind_listener(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return Status::invalid_argument(gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) return Status::io_error(errno_text(errno));
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    auto error = errno;
    ::close(fd);
    return Status::io_error(errno_text(error));
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

Result<std::unique_ptr<FrameGuard>> FrameGuard::start(const FrameGuardConfig& config, FrameGuardLog log) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->log = log ? std::move(log) : [](const std::string&) {};
  auto listener = bind_listener(config.listen_host, config.listen_port);
  if (!listener.ok())
    return Status::of(listener.code(), fmt::format("cannot listen on {}:{}: {}", config.listen_host, config.listen_port,
                                                   listener.error()));
  impl->listen_fd = *listener;
  impl->port = bound_port(impl->listen_fd);
  impl->wake_fd = ::eventfd(0, EFD_CLOEXEC);
  if (impl->wake_fd < 0) return Status::io_error(fmt::format("frame guard: eventfd: {}", errno_text(errno)));
  auto* raw = impl.get();
  impl->acceptor = std::thread([raw] { raw->accept_loop(); });
  return std::unique_ptr<FrameGuard>(new FrameGuard(std::move(impl)));
}

FrameGuard::FrameGuard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FrameGuard::~FrameGuard() = default;

uint16_t FrameGuard::port() const { return impl_->port; }

}  // namespace cerebro
