#pragma once
// RendezvousBoard: the key-value board a data-parallel gang's ranks meet on,
// served by the scheduler's side (actors/rendezvous.cpp is its
// thin actor). Each gang attempt has its own scope, opened on first use and
// dropped by close() when the attempt ends, so a failed attempt's keys never
// confuse its retry. Answers at once: a rank waiting for a key asks again
// (the c10d store in models/gang_trainer.cpp polls until its timeout).
// Not thread-safe; owned by one actor.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/base/rendezvous.hpp"

namespace cerebro {

class RendezvousBoard {
 public:
  rendezvous_reply handle(const rendezvous_request& request);
  // The gang's attempt ended: its keys go.
  void close(int64_t gang) { scopes_.erase(gang); }
  size_t open_scopes() const { return scopes_.size(); }

 private:
  using Scope = std::map<std::string, std::vector<uint8_t>>;
  std::map<int64_t, Scope> scopes_;
};

}  // namespace cerebro
