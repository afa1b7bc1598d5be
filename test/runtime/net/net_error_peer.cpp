// The other process of test_net_errors: publishes, through CAF's middleman on
// 127.0.0.1, an actor that answers (fail, code, text) with make_error(code,
// text), prints the port it listens on, and serves until its stdin closes.
#include <iostream>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/net/error_category.hpp"
#include "runtime/net/messages.hpp"

namespace {

using fail_atom = caf::atom_constant<caf::atom("fail")>;

class peer_config : public caf::actor_system_config {
 public:
  peer_config() {
    cerebro::register_message_types(*this);
    load<caf::io::middleman>();
  }
};

}  // namespace

int main() {
  peer_config config;
  caf::actor_system system{config};
  auto failing = system.spawn([]() -> caf::behavior {
    return {[](fail_atom, int32_t code, const std::string& text) -> caf::result<int32_t> {
      return cerebro::make_error(static_cast<cerebro::StatusCode>(code), text);
    }};
  });
  auto port = system.middleman().publish(failing, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "net_error_peer: cannot publish: " << system.render(port.error()) << "\n";
    return 1;
  }
  std::cout << *port << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
  caf::anon_send_exit(failing, caf::exit_reason::user_shutdown);
  return 0;
}
