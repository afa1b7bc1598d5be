#pragma once
// Identifiers shared by the scheduler, the workers and the unit log.
// A *unit* is one pass of one config's model over one partition in one epoch
// (the paper's sub-epoch); epochs are counted per config.

#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>

namespace cerebro {

using ConfigId = int32_t;
using PartitionId = int32_t;
using WorkerId = int32_t;

struct Unit {
  ConfigId config = 0;
  PartitionId partition = 0;
  int32_t epoch = 0;
};

inline bool operator==(const Unit& a, const Unit& b) {
  return a.config == b.config && a.partition == b.partition && a.epoch == b.epoch;
}
inline bool operator!=(const Unit& a, const Unit& b) { return !(a == b); }
// Orders by (config, epoch, partition), so units can key ordered containers.
inline bool operator<(const Unit& a, const Unit& b) {
  return std::tie(a.config, a.epoch, a.partition) < std::tie(b.config, b.epoch, b.partition);
}

// "config 3 / partition 1 / epoch 0"
inline std::string to_string(const Unit& u) {
  return "config " + std::to_string(u.config) + " / partition " + std::to_string(u.partition) + " / epoch " +
         std::to_string(u.epoch);
}

inline std::ostream& operator<<(std::ostream& os, const Unit& u) { return os << to_string(u); }

}  // namespace cerebro
