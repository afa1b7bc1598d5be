// GangSession: the ranks of a data-parallel gang meeting (the board's
// messages, a local TCPStore, or an in-memory store for ranks as threads)
// and their c10d ProcessGroupGloo (see gang_trainer.hpp).
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "models/computing_threads.hpp"
#include "models/gang_session_impl.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

using namespace detail;

namespace {

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.001, seconds) * 1000));
}

// is the caller's (the board's messages, or a local TCPStore).
std::unique_ptr<GangSession::Impl> new_impl(int rank, int size, const std::string& own_address, double timeout_s) {
  auto impl = std::make_unique<GangSession::Impl>();
  impl->rank = rank;
  impl->size = size;
  impl->own_address = own_address;
  impl->timeout = to_ms(timeout_s);
  return impl;
}

}  // namespace

std::shared_ptr<::gloo::transport::Device> idle_priority_device(const std::string& address) {
  // The device starts its loop thread, which inherits the scheduling policy
  // of the thread that creates it: create it on a thread of its own.
  std::shared_ptr<::gloo::transport::Device> device;
  std::exception_ptr failure;
  std::thread maker([&] {
    sched_param idle{};
    // Lowering one's own priority needs no privilege; if it fails anyway the
    // loop runs at normal priority, which is correct, only slower.
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
    try {
      device = c10d::ProcessGroupGloo::createDeviceForHostname(address);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  maker.join();
  if (failure) std::rethrow_exception(failure);
  return device;
}

::gloo::Context& GangSession::Impl::exchange_context() {
  if (!exchange) {
    auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);  // a read or write waits at most this long, then throws
    // Apart from the group's keys, which c10d prefixes with the context's number.
    c10d::ProcessGroupGloo::GlooStore keys(c10::make_intrusive<c10d::PrefixStore>("exchange", store));
    context->connectFullMesh(keys, gloo_device());
    for (int r = 0; r < size; ++r) {
      if (r != rank) context->getPair(r)->setSync(/*sync=*/true, /*busyPoll=*/false);
    }
    exchange = std::move(context);
  }
  return *exchange;
}

bool waiting_may_spin() {
  cpu_set_t usable;
  const int cores = sched_getaffinity(0, sizeof(usable), &usable) == 0 ? CPU_COUNT(&usable) : 1;
  return ComputingThread::count() <= cores;
}

void GangSession::Impl::choose_exchange_wait() {
  ::gloo::Context& context = exchange_context();
  const bool spin = waiting_may_spin();
  // On a pair already synchronous this only sets how it waits (under the
  // pair's lock): no need to remember what it was.
  for (int r = 0; r < size; ++r) {
    if (r != rank) context.getPair(r)->setSync(/*sync=*/true, /*busyPoll=*/spin);
  }
}

GangSession::GangSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GangSession::~GangSession() = default;
int GangSession::rank() const { return impl_->rank; }
int GangSession::size() const { return impl_->size; }
int GangSession::port() const { return impl_->tcp_port; }

namespace {

// A c10d store whose operations are rendezvous messages to the gang's board
// (see RendezvousCall). The board answers at once; get and wait poll it
// until the keys are there or the timeout passed.
class MessageStore : public c10d::Store {
 public:
  MessageStore(RendezvousCall call, int64_t gang, std::chrono::milliseconds timeout)
      : c10d::Store(timeout), call_(std::move(call)), gang_(gang) {}

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    rendezvous_request r = request(RendezvousOp::set, {key});
    r.value = value;
    ask(r);
  }
  std::vector<uint8_t> get(const std::string& key) override {
    wait({key}, timeout_);
    rendezvous_reply reply = ask(request(RendezvousOp::get, {key}));
    if (!reply.found) throw Error(fmt::format("gang rendezvous: key '{}' vanished", key));
    return reply.value;
  }
  int64_t add(const std::string& key, int64_t value) override {
    rendezvous_request r = request(RendezvousOp::add, {key});
    r.number = value;
    return ask(r).number;
  }
  bool deleteKey(const std::string& key) override { return ask(request(RendezvousOp::remove, {key})).found; }
  bool check(const std::vector<std::string>& keys) override { return ask(request(RendezvousOp::check, keys)).found; }
  int64_t getNumKeys() override { return ask(request(RendezvousOp::num_keys, {})).number; }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(1);
    while (!check(keys)) {
      if (timeout != kNoTimeout && std::chrono::steady_clock::now() >= deadline)
        throw Error(fmt::format("gang rendezvous: a peer did not arrive within {} ms (waiting for '{}')",
                                timeout.count(), keys.empty() ? std::string() : keys.front()));
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }

 private:
  rendezvous_request request(RendezvousOp op, std::vector<std::string> keys) const {
    rendezvous_request r;
    r.gang = gang_;
    r.op = op;
    r.keys = std::move(keys);
    return r;
  }
  rendezvous_reply ask(const rendezvous_request& r) {
    Result<rendezvous_reply> reply = call_(r);
    if (!reply.ok()) throw Error("gang rendezvous: " + reply.status().message());
    return std::move(reply).value();
  }

  RendezvousCall call_;
  int64_t gang_;
};

}  // namespace

Result<std::unique_ptr<GangSession>> GangSession::open(RendezvousCall call, int64_t gang,
                                                       const std::string& own_address, int rank, int size,
                                                       double timeout_s) {
  if (size < 2 || rank < 0 || rank >= size) {
    return Status::invalid_argument(
        fmt::format("gang rank {} outside 0..{} (a gang has at least 2 ranks)", rank, size - 1));
  }
  if (!call) return Status::invalid_argument("gang rendezvous: no way to reach the board");
  return guarded<std::unique_ptr<GangSession>>(
      fmt::format("gang rendezvous (rank {})", rank),
      [&] {
        auto impl = new_impl(rank, size, own_address, timeout_s);
        impl->store = c10::make_intrusive<MessageStore>(std::move(call), gang, impl->timeout);
        return std::unique_ptr<GangSession>(new GangSession(std::move(impl)));
      },
      StatusCode::unavailable);  // peers that do not arrive, a store that cannot be reached
}

Result<std::unique_ptr<GangSession>> GangSession::host(const std::string& address, int size, double timeout_s) {
  if (size < 2) return Status::invalid_argument(fmt::format("a gang needs at least 2 ranks, got {}", size));
  return guarded<std::unique_ptr<GangSession>>(
      "gang rendezvous (rank 0)",
      [&] {
        auto impl = new_impl(0, size, address, timeout_s);
        c10d::TCPStoreOptions options;
        options.port = 0;  // a free port, reported through the coordinator
        options.isServer = true;
        options.numWorkers = static_cast<size_t>(size);
        options.waitWorkers = false;  // the others join after they learn the port
        options.timeout = impl->timeout;
        auto store = c10::make_intrusive<c10d::TCPStore>(address, options);
        impl->tcp_port = store->getPort();
        impl->store = std::move(store);
        return std::unique_ptr<GangSession>(new GangSession(std::move(impl)));
      },
      StatusCode::unavailable);  // peers that do not arrive, a store that cannot be reached
}

Result<std::unique_ptr<GangSession>> GangSession::join(const std::string& store_address, int port,
                                                       const std::string& own_address, int rank, int size,
                                                       double timeout_s) {
  if (size < 2 || rank < 1 || rank >= size) {
    return Status::invalid_argument(fmt::format("gang rank {} outside 1..{} (rank 0 hosts)", rank, size - 1));
  }
  if (port < 1 || port > 65535)
    return Status::invalid_argument(fmt::format("gang store port {} outside 1..65535", port));
  return guarded<std::unique_ptr<GangSession>>(
      fmt::format("gang rendezvous (rank {})", rank),
      [&] {
        auto impl = new_impl(rank, size, own_address, timeout_s);
        c10d::TCPStoreOptions options;
        options.port = static_cast<uint16_t>(port);
        options.isServer = false;
        options.numWorkers = static_cast<size_t>(size);
        options.waitWorkers = false;
        options.timeout = impl->timeout;
        impl->store = c10::make_intrusive<c10d::TCPStore>(store_address, options);
        impl->tcp_port = port;
        return std::unique_ptr<GangSession>(new GangSession(std::move(impl)));
      },
      StatusCode::unavailable);  // peers that do not arrive, a store that cannot be reached
}

Result<std::vector<std::unique_ptr<GangSession>>> local_gang(int ranks, double timeout_s, const std::string& address) {
  if (ranks < 2) return Status::invalid_argument(fmt::format("a gang needs at least 2 ranks, got {}", ranks));
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::unique_ptr<GangSession>> sessions;
  for (int rank = 0; rank < ranks; ++rank) {
    auto impl = new_impl(rank, ranks, address, timeout_s);
    impl->store = store;
    sessions.push_back(std::unique_ptr<GangSession>(new GangSession(std::move(impl))));
  }
  return sessions;
}

}  // namespace cerebro::models
