#include <algorithm>
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace {

UnitLogEntry entry_of(const unit_result& r, uint64_t seed, double start_s, double end_s) {
  UnitLogEntry e;
  e.config = r.config;
  e.partition = r.partition;
  e.epoch = r.epoch;
  e.worker = r.worker;
  e.status = r.status;
  e.seed = seed;
  e.train_loss = r.train_loss;
  e.examples = r.examples;
  e.has_validation = r.has_validation;
  e.val_loss = r.val_loss;
  e.val_accuracy = r.val_accuracy;
  e.val_metrics = r.val_metrics;
  e.start_s = start_s;
  e.result_s = r.result_s;
  e.end_s = end_s;
  e.train_s = r.train_s;
  e.validate_s = r.validate_s;
  e.restore_s = r.restore_s;
  e.save_s = r.save_s;
  e.pipeline_workers = r.pipeline_workers;
  return e;
}

// A commit received and not yet written: the group commit's queue.
struct pending_commit {
  unit_result result;
  uint64_t seed = 0;
  double start_s = 0, end_s = 0;  // end_s: when the scheduler asked for the commit
  bool damage = false;
  caf::typed_response_promise<UnitLogEntry> promise;
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
};

struct checkpoint_state {
  std::shared_ptr<StateStore> store;
  std::vector<pending_commit> pending;
  static inline const char* name = "cerebro.checkpoint";
};

using checkpoint_ptr = checkpoint_actor::stateful_pointer<checkpoint_state>;

// Writes every pending commit in one synced batch, then answers each (in the
// order received): durable before acknowledged, one sync for all of them.
void flush_commits(checkpoint_ptr self) {
  auto pending = std::move(self->state.pending);
  self->state.pending.clear();
  const auto& faults = FaultInjection::instance();
  for (size_t first = 0; first < pending.size();) {
    // A test's crash "after the K-th commit" ends a batch at that commit, so
    // exactly K commits are durable when it stops, grouped or not.
    size_t end = pending.size();
    for (size_t i = first; i < end; ++i)
      if (faults.stops_at("after_commit", static_cast<int64_t>(i - first) + 1)) end = i + 1;
    std::vector<StateStore::UnitCommit> units;
    units.reserve(end - first);
    const auto batch_start = std::chrono::steady_clock::now();
    for (size_t i = first; i < end; ++i) {
      auto& p = pending[i];
      // end_s: when its batch's synced write begins, on the scheduler's clock
      // (the commit's request plus the time it waited here); the write that
      // makes it durable cannot carry its own end.
      const double waited = std::chrono::duration<double>(batch_start - p.received).count();
      UnitLogEntry entry = entry_of(p.result, p.seed, p.start_s, p.end_s);
      entry.end_s = p.end_s + std::max(0.0, waited);
      units.push_back({std::move(entry), &p.result.state, p.damage});
    }
    auto stored = self->state.store->commit_units(units);
    for (size_t i = first; i < end; ++i) {
      if (!stored.ok()) {
        pending[i].promise.deliver(to_error(stored.status()));
        continue;
      }
      // A test may stop here: the unit is durable but not yet acknowledged.
      if (auto thrown = faults.crash_point("after_commit"); !thrown.ok()) throw Error(thrown);
      pending[i].promise.deliver((*stored)[i - first]);
    }
    first = end;
  }
}

checkpoint_actor::behavior_type checkpoint_behavior(checkpoint_ptr self, std::shared_ptr<StateStore> store) {
  self->state.store = store;
  return {
      // Not written at once: the commit waits in `pending` for the flush this
      // actor sends itself behind the messages already in its mailbox, so the
      // commits that arrived together share one synced write.
      [self](commit_atom, unit_result& r, uint64_t seed, double start_s, double end_s) -> caf::result<UnitLogEntry> {
        if (auto thrown = FaultInjection::instance().crash_point("before_commit"); !thrown.ok()) throw Error(thrown);
        // Counted per process: a run that recovers in place spawns a new
        // checkpoint actor and must not be damaged again at the same count.
        static std::atomic<int64_t> commits{0};
        bool damage = FaultInjection::instance().damage_state(++commits);
        auto promise = self->make_response_promise<UnitLogEntry>();
        if (self->state.pending.empty()) self->send(self, flush_atom::value);
        self->state.pending.push_back({std::move(r), seed, start_s, end_s, damage, promise});
        return promise;
      },
      [self](flush_atom) { flush_commits(self); },
      // A gang's units and its one state: after the commits queued before it.
      [self, store](commit_gang_atom, gang_commit& g) -> caf::result<std::vector<UnitLogEntry>> {
        flush_commits(self);
        if (g.members.size() != g.seeds.size() || g.members.size() < 2)
          return to_error(Status::invalid_argument(fmt::format(
              "a gang commit needs >= 2 members with one seed each, got {} and {}", g.members.size(), g.seeds.size())));
        if (auto thrown = FaultInjection::instance().crash_point("before_commit"); !thrown.ok()) throw Error(thrown);
        std::vector<UnitLogEntry> entries;
        for (size_t r = 0; r < g.members.size(); ++r)
          entries.push_back(entry_of(g.members[r], g.seeds[r], g.start_s, g.end_s));
        auto stored = store->commit_gang(std::move(entries), g.members.front().state);
        if (!stored.ok()) return to_error(stored.status());
        if (auto thrown = FaultInjection::instance().crash_point("after_commit"); !thrown.ok()) throw Error(thrown);
        return std::move(stored).value();
      },
      // Every other request (but latest_atom, below) first writes the commits
      // received before it, so it sees the store as if each commit had been
      // written on arrival.
      [self, store](copy_atom, const state_copy& copy) -> caf::result<bool> {
        flush_commits(self);
        auto params = nlohmann::json::parse(copy.params_json, nullptr, false);
        if (params.is_discarded())
          return to_error(
              Status::invalid_argument(fmt::format("config {}: the copy's hyper-parameters are not JSON", copy.to)));
        auto copied = store->copy_epoch_state(copy.from, copy.from_epoch, copy.to, params);
        if (!copied.ok()) return to_error(copied);
        return true;
      },
      [self, store](decision_atom, const SearchDecision& decision) -> caf::result<bool> {
        flush_commits(self);
        auto stored = store->put_decision(to_json(decision));
        if (!stored.ok()) return to_error(stored);
        return true;
      },
      [self, store](decision_atom, const std::string& user_action_json) -> caf::result<bool> {
        flush_commits(self);
        auto record = nlohmann::json::parse(user_action_json, nullptr, false);
        if (record.is_discarded()) return to_error(Status::invalid_argument("a user action record is not JSON"));
        auto stored = store->put_decision(record);
        if (!stored.ok()) return to_error(stored);
        return true;
      },
      // Fails with the store's code: corruption only when the state fails its
      // checksum (the scheduler then rolls back), io_error or not_found else.
      // Only a pending commit of this config changes what it reads: a read of
      // another config's state goes first (the scheduler dispatches a freed
      // worker's next unit while the previous unit's commit waits here).
      [self, store](latest_atom, ConfigId config) -> caf::result<StateBytes> {
        const auto& pending = self->state.pending;
        if (std::any_of(pending.begin(), pending.end(),
                        [config](const pending_commit& p) { return p.result.config == config; }))
          flush_commits(self);
        static std::atomic<int64_t> reads{0};
        if (FaultInjection::instance().unreadable_state(++reads))
          return to_error(Status::io_error(fmt::format("config {}: reading its state failed (injected)", config)));
        auto state = store->latest_state(config);
        if (!state.ok()) return to_error(state.status());
        return std::move(state).value();
      },
  };
}

}  // namespace

checkpoint_actor spawn_checkpoint(caf::actor_system& system, std::shared_ptr<StateStore> store) {
  return system.spawn<caf::detached>(checkpoint_behavior, std::move(store));
}

}  // namespace cerebro
