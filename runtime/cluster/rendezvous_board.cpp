#include "runtime/cluster/rendezvous_board.hpp"

#include <string>

namespace cerebro {

namespace {

// c10d's add() keeps counters as decimal text, and a get() of a counter
// reads that text (TCPStore does the same): one representation for both.
std::vector<uint8_t> as_bytes(const std::string& text) { return {text.begin(), text.end()}; }

int64_t as_number(const std::vector<uint8_t>& bytes) {
  std::string text(bytes.begin(), bytes.end());
  try {
    return text.empty() ? 0 : std::stoll(text);
  } catch (const std::exception&) {
    return 0;  // a key set() to something that is not a number counts from 0
  }
}

}  // namespace

rendezvous_reply RendezvousBoard::handle(const rendezvous_request& r) {
  rendezvous_reply reply;
  Scope& scope = scopes_[r.gang];
  const std::string key = r.keys.empty() ? std::string() : r.keys.front();
  switch (r.op) {
    case RendezvousOp::set:
      scope[key] = r.value;
      reply.found = true;
      break;
    case RendezvousOp::get: {
      auto it = scope.find(key);
      reply.found = it != scope.end();
      if (reply.found) reply.value = it->second;
      break;
    }
    case RendezvousOp::add: {
      auto it = scope.find(key);
      int64_t sum = (it == scope.end() ? 0 : as_number(it->second)) + r.number;
      scope[key] = as_bytes(std::to_string(sum));
      reply.found = true;
      reply.number = sum;
      break;
    }
    case RendezvousOp::check:
      reply.found = true;
      for (const auto& k : r.keys)
        if (!scope.count(k)) reply.found = false;
      break;
    case RendezvousOp::remove: reply.found = scope.erase(key) > 0; break;
    case RendezvousOp::num_keys:
      reply.found = true;
      reply.number = static_cast<int64_t>(scope.size());
      break;
  }
  return reply;
}

}  // namespace cerebro
