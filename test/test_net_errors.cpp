// runtime/net/error_category: a Status crosses an actor boundary as a
// caf::error of the project's category and comes back with its code.
#define BOOST_TEST_MODULE net_errors
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include "runtime/net/error_category.hpp"
#include "runtime/net/messages.hpp"

using namespace cerebro;

namespace {

class system_config : public caf::actor_system_config {
 public:
  system_config() { register_message_types(*this); }
};

using fail_atom = caf::atom_constant<caf::atom("fail")>;

}  // namespace

BOOST_AUTO_TEST_CASE(every_code_survives_the_round_trip) {
  for (auto code : {StatusCode::unknown, StatusCode::invalid_argument, StatusCode::not_found, StatusCode::corruption,
                    StatusCode::io_error, StatusCode::failed_precondition, StatusCode::unavailable,
                    StatusCode::internal}) {
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
