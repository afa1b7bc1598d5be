// MopBook's units handed over for commit: the worker is free once
// its unit's result arrives, the unit's config stays busy until its commit
// answers. Split from mop_book.cpp to keep each file readable in one sitting.
#include <string>

#include <fmt/format.h>

#include "runtime/base/status.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/mop_book_detail.hpp"

namespace cerebro {

using mop_book_detail::is_over;
using mop_book_detail::misuse;

void MopBook::hand_over(WorkerId w, const Unit& u) {
  WorkerEntry& worker = worker_entry(w, "hand_over");
  if (!worker.running || *worker.running != u || worker.in_gang) {
    misuse("hand_over", fmt::format("worker {} is {}, cannot hand over {}", w,
                                    !worker.running  ? std::string("idle")
                                    : worker.in_gang ? "in a gang"
                                                     : "running " + to_string(*worker.running),
                                    to_string(u)));
  }
  worker.running.reset();
  --running_units_;
  // The config stays busy (running_on names the worker it ran on) until the
  // commit answers: no second unit of it may start before its state is durable.
  config_entry(u.config, "hand_over").handed_over = u;
  ++handed_over_units_;
}

MopBook::ConfigEntry& MopBook::take_handed_over(const Unit& u, const char* operation) {
  ConfigEntry& config = config_entry(u.config, operation);
  if (!config.handed_over || *config.handed_over != u) {
    misuse(operation, fmt::format("{} is not handed over for commit{}", to_string(u),
                                  config.handed_over ? " (" + to_string(*config.handed_over) + " is)" : ""));
  }
  config.handed_over.reset();
  --handed_over_units_;
  release_config(config);
  return config;
}

bool MopBook::complete_handed_over(const Unit& u) {
  ConfigEntry& config = take_handed_over(u, "complete_handed_over");
  if (is_over(config.state)) return false;  // stopped/failed while it committed
  ++config.units_done;
  ++units_done_;
  if (!config.pending.empty()) return false;
  config.state = ConfigState::awaiting_decision;
  return true;
}

void MopBook::requeue_handed_over(const Unit& u) {
  ConfigEntry& config = take_handed_over(u, "requeue_handed_over");
  if (!is_over(config.state)) make_pending(config, u.partition);
}

}  // namespace cerebro
