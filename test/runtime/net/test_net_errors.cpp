// runtime/net/error_category: a Status crosses an actor boundary as a
// caf::error of the project's category and comes back with its code, in one
// process and to another one through CAF's middleman.
#define BOOST_TEST_MODULE net_errors
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/net/error_category.hpp"
#include "runtime/net/messages.hpp"

using namespace cerebro;

namespace {

class system_config : public caf::actor_system_config {
 public:
  explicit system_config(bool middleman = false) {
    register_message_types(*this);
    if (middleman) load<caf::io::middleman>();
  }
};

using fail_atom = caf::atom_constant<caf::atom("fail")>;

// Every code but ok: the ones a failure can carry.
std::vector<StatusCode> failure_codes() {
  std::vector<StatusCode> codes;
  for (int c = 1; c <= static_cast<int>(kLastStatusCode); ++c) codes.push_back(static_cast<StatusCode>(c));
  return codes;
}

// test/net_error_peer.cpp in a process of its own, which serves until its
// stdin closes (when this ends).
class PeerProcess {
 public:
  PeerProcess() {
    int to_peer[2], from_peer[2];
    if (pipe(to_peer) != 0 || pipe(from_peer) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_peer[0], STDIN_FILENO);
      dup2(from_peer[1], STDOUT_FILENO);
      for (int fd : {to_peer[0], to_peer[1], from_peer[0], from_peer[1]}) close(fd);
      execl(CEREBRO_NET_ERROR_PEER, CEREBRO_NET_ERROR_PEER, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_peer[0]);
    close(from_peer[1]);
    to_peer_ = to_peer[1];
    from_peer_ = fdopen(from_peer[0], "r");
  }
  ~PeerProcess() {
    if (to_peer_ >= 0) close(to_peer_);
    if (from_peer_) fclose(from_peer_);
    int status = 0;
    if (pid_ > 0) waitpid(pid_, &status, 0);
  }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // The port the peer published its actor on (0 when it did not start).
  uint16_t port() {
    unsigned port = 0;
    if (!from_peer_ || std::fscanf(from_peer_, "%u", &port) != 1) return 0;
    return static_cast<uint16_t>(port);
  }

 private:
  pid_t pid_ = -1;
  int to_peer_ = -1;
  FILE* from_peer_ = nullptr;
};

}  // namespace

BOOST_AUTO_TEST_CASE(every_code_survives_the_round_trip) {
  for (auto code : failure_codes()) {
    auto error = to_error(Status::of(code, "what went wrong"));
    BOOST_TEST(error.category() == status_error_category);
    auto back = to_status(error);
    BOOST_TEST((back.code() == code), to_string(code));
    BOOST_TEST(back.message() == "what went wrong");
  }
  BOOST_TEST(!to_error(Status::ok_status()));
  BOOST_TEST(to_status(caf::error{}).ok());
}

BOOST_AUTO_TEST_CASE(status_codes_are_caf_error_codes) {
  caf::error error = StatusCode::corruption;
  BOOST_TEST((error == StatusCode::corruption));
  BOOST_TEST((error != StatusCode::io_error));
  BOOST_TEST((make_error(StatusCode::io_error, "disk") == StatusCode::io_error));
}

BOOST_AUTO_TEST_CASE(cafs_own_errors_are_unclassified_with_their_text) {
  auto refused = to_status(caf::make_error(caf::sec::runtime_error, std::string("wrong token")));
  BOOST_TEST((refused.code() == StatusCode::unknown));
  BOOST_TEST(refused.message() == "wrong token");
  auto timeout = to_status(caf::make_error(caf::sec::request_timeout));
  BOOST_TEST((timeout.code() == StatusCode::unknown));
  BOOST_TEST(timeout.message().find("request_timeout") != std::string::npos);
  // A code this build does not know (a newer peer's) is still a failure.
  auto future = to_status(caf::error{200, status_error_category, caf::make_message(std::string("new"))});
  BOOST_TEST((future.code() == StatusCode::unknown));
}

BOOST_AUTO_TEST_CASE(the_actor_system_renders_the_category) {
  system_config config;
  caf::actor_system system{config};
  BOOST_TEST(system.render(make_error(StatusCode::corruption, "config 2 state: checksum mismatch")) ==
             "corruption: config 2 state: checksum mismatch");
  BOOST_TEST(system.render(make_error(StatusCode::unavailable)) == "unavailable");
}

BOOST_AUTO_TEST_CASE(the_code_survives_serialization_and_an_actor_reply) {
  system_config config;
  caf::actor_system system{config};
  // What the middleman does to an error that crosses to another node.
  std::vector<char> buf;
  caf::binary_serializer sink{system, buf};
  auto sent = to_error(Status::io_error("config 1: reading its state failed"));
  BOOST_REQUIRE(!sink(sent));
  caf::error received;
  caf::binary_deserializer source{system, buf};
  BOOST_REQUIRE(!source(received));
  BOOST_TEST(to_status(received).is_io_error());
  BOOST_TEST(to_status(received).message() == "config 1: reading its state failed");

  auto failing = system.spawn([]() -> caf::behavior {
    return {[](fail_atom, int32_t code) -> caf::result<int32_t> {
      return to_error(Status::of(static_cast<StatusCode>(code), "from the actor"));
    }};
  });
  caf::scoped_actor self{system};
  Status answer;
  self->request(failing, caf::infinite, fail_atom::value, static_cast<int32_t>(StatusCode::corruption))
      .receive([&](int32_t) { answer = Status::internal("the actor answered with a value"); },
               [&](const caf::error& e) { answer = to_status(e); });
  BOOST_TEST(answer.is_corruption(), answer.message());
  BOOST_TEST(answer.message() == "from the actor");
  self->send_exit(failing, caf::exit_reason::user_shutdown);
}

// What the middleman does for real: an error made in another process, for
// each code, arrives here with to_status giving the same code and message.
BOOST_AUTO_TEST_CASE(every_code_crosses_to_another_process_and_comes_back_the_same) {
  PeerProcess peer;
  const uint16_t port = peer.port();
  BOOST_REQUIRE_MESSAGE(port > 0, "the peer process " CEREBRO_NET_ERROR_PEER " did not publish its actor");
  system_config config{true};
  caf::actor_system system{config};
  auto remote = system.middleman().remote_actor("127.0.0.1", port);
  BOOST_REQUIRE_MESSAGE(remote, (remote ? std::string() : system.render(remote.error())));
  caf::scoped_actor self{system};
  auto ask = [&](int32_t code, const std::string& text) {
    Status answer = Status::internal("no answer");
    self->request(*remote, std::chrono::seconds(30), fail_atom::value, code, text)
        .receive([&](int32_t) { answer = Status::internal("the peer answered with a value"); },
                 [&](const caf::error& e) {
                   BOOST_TEST(e.category() == status_error_category);
                   answer = to_status(e);
                 });
    return answer;
  };
  for (StatusCode code : failure_codes()) {
    const std::string text = std::string("made in the peer process: ") + to_string(code);
    Status answer = ask(static_cast<int32_t>(code), text);
    BOOST_TEST((answer.code() == code), to_string(code) << " came back as " << to_string(answer.code()));
    BOOST_TEST(answer.message() == text);
  }
  // A code this build does not know (a newer peer's) still arrives as a failure.
  Status newer = ask(static_cast<int32_t>(kLastStatusCode) + 1, "a newer peer's code");
  BOOST_TEST((newer.code() == StatusCode::unknown));
  BOOST_TEST(newer.message() == "a newer peer's code");
}
