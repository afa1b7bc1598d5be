#include "actors/agent_heartbeat.hpp"

namespace cerebro {

namespace {

struct heartbeat_state {
  agent_heartbeat_config config;
  coordinator_actor gateway;  // joined to, or being joined
  int32_t agent_id = -1;
  bool joined = false;
  // Bumped at each join and each loss: a heartbeat timer or an answer of an
  // earlier round is stale and ignored.
  uint64_t round = 0;
  static inline const char* name = "cerebro.agent_heartbeat";
};

using heartbeat_ptr = agent_heartbeat_actor::stateful_pointer<heartbeat_state>;

template <class F, class... Ts>
void call(const F& f, const Ts&... xs) {
  if (f) f(xs...);
}

void lost(heartbeat_ptr self, const std::string& why, bool gateway_gone) {
  auto& st = self->state;
  st.joined = false;
  ++st.round;
  self->demonitor(st.gateway.address());
  call(st.config.events.lost, why);
  if (st.config.finder)
    self->send(self, find_gateway_atom::value);
  else if (gateway_gone)
    self->quit();
  else
    self->send(self, join_atom::value, st.gateway);
}

void joined(heartbeat_ptr self, int32_t agent_id) {
  auto& st = self->state;
  st.agent_id = agent_id;
  st.joined = true;
  self->monitor(st.gateway);
  self->send(self, heartbeat_atom::value, st.round);
}

}  // namespace

agent_heartbeat_actor spawn_agent_heartbeat(caf::actor_system& system, agent_heartbeat_config config) {
  return system.spawn(
      [](heartbeat_ptr self, agent_heartbeat_config given) -> agent_heartbeat_actor::behavior_type {
        self->state.config = std::move(given);
        self->set_down_handler([self](caf::down_msg& msg) {
          if (self->state.joined && msg.source == self->state.gateway.address()) lost(self, "connection closed", true);
        });
        if (self->state.config.joined_gateway) {
          self->state.gateway = self->state.config.joined_gateway;
          joined(self, self->state.config.agent_id);
        } else {
          self->send(self, find_gateway_atom::value);
        }
        return {
            [self](find_gateway_atom) {
              if (!self->state.config.finder) return self->send(self, join_atom::value, self->state.gateway);
              self->request(self->state.config.finder, caf::infinite, find_gateway_atom::value)
                  .then([self](coordinator_actor& gateway) { self->send(self, join_atom::value, std::move(gateway)); },
                        [self](caf::error&) {
                          self->delayed_send(self, self->state.config.retry_delay, find_gateway_atom::value);
                        });
            },
            [self](join_atom, coordinator_actor& gateway) {
              auto& st = self->state;
              st.gateway = std::move(gateway);
              st.joined = false;
              auto round = ++st.round;
              self->request(st.gateway, st.config.join_timeout, join_atom::value, st.config.join)
                  .then(
                      [self, round](join_reply& reply) {
                        if (round != self->state.round) return;
                        if (!reply.accepted) {
                          call(self->state.config.events.refused, reply.reason);
                          return self->quit();
                        }
                        call(self->state.config.events.joined, reply.agent_id);
                        joined(self, reply.agent_id);
                      },
                      [self, round](caf::error& e) {
                        if (round != self->state.round) return;
                        call(self->state.config.events.join_failed, self->system().render(e));
                        if (!self->state.config.finder && e == caf::sec::request_receiver_down) return self->quit();
                        self->delayed_send(self, self->state.config.retry_delay, find_gateway_atom::value);
                      });
            },
            [self](heartbeat_atom, uint64_t round) {
              auto& st = self->state;
              if (!st.joined || round != st.round) return;
              self->request(st.gateway, st.config.answer_timeout, heartbeat_atom::value, st.agent_id)
                  .then(
                      [self, round](bool known) {
                        if (round != self->state.round) return;
                        if (!known) return lost(self, kUnknownAgent, false);
                        self->delayed_send(self, self->state.config.interval, heartbeat_atom::value, round);
                      },
                      [self, round](caf::error& e) {
                        if (round != self->state.round) return;
                        lost(self, "heartbeat unanswered: " + self->system().render(e), false);
                      });
            },
        };
      },
      std::move(config));
}

gateway_finder_actor spawn_gateway_finder(caf::actor_system& system, GatewayAddress address,
                                          std::function<void(const std::string&)> retrying) {
  return system.spawn<caf::detached>(
      [address, retrying](gateway_finder_actor::pointer self) -> gateway_finder_actor::behavior_type {
        return {[self, address, retrying](find_gateway_atom) -> caf::result<coordinator_actor> {
          // Blocks this actor's own thread until the coordinator answers.
          auto gateway = find_gateway(self->system(), address, -1, retrying);
          if (!gateway) return gateway.error();
          return *gateway;
        }};
      });
}

}  // namespace cerebro
