#pragma once
// The messages of a data-parallel gang's rendezvous, plain. The
// gang's ranks find each other through a key-value board on the scheduler's
// side (runtime/cluster/rendezvous_board.hpp) instead of LibTorch's TCPStore,
// whose server binds every interface: the ranks' Gloo addresses then travel
// only over the cluster's token-checked (or TLS) channel. Their CAF inspect
// functions are in runtime/net/messages.hpp.

#include <cstdint>
#include <string>
#include <vector>

namespace cerebro {

enum class RendezvousOp : int32_t {
  set = 0,       // key := value
  get = 1,       // the value of key (found = false while it is absent)
  add = 2,       // key += number (a missing key counts as 0); answers the sum
  check = 3,     // whether every one of keys is there
  remove = 4,    // deletes key; found says whether it was there
  num_keys = 5,  // how many keys the gang's scope holds
};

struct rendezvous_request {
  int64_t gang = 0;  // the scope: one gang attempt's keys never meet another's
  RendezvousOp op = RendezvousOp::get;
  std::vector<std::string> keys;  // one key, or check's keys
  std::vector<uint8_t> value;     // set
  int64_t number = 0;             // add
};

struct rendezvous_reply {
  bool found = false;
  std::vector<uint8_t> value;  // get
  int64_t number = 0;          // add, num_keys
};

}  // namespace cerebro
