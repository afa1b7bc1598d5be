#include <atomic>

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
  e.end_s = end_s;
  e.train_s = r.train_s;
  e.validate_s = r.validate_s;
  e.restore_s = r.restore_s;
  e.save_s = r.save_s;
  return e;
}

checkpoint_actor::behavior_type checkpoint_behavior(checkpoint_actor::pointer, std::shared_ptr<StateStore> store) {
  return {
      [store](commit_atom, const unit_result& r, uint64_t seed, double start_s,
              double end_s) -> caf::result<UnitLogEntry> {
        FaultInjection::instance().crash_point("before_commit");
        // Counted per process: a run that recovers in place spawns a new
        // checkpoint actor and must not be damaged again at the same count.
        static std::atomic<int64_t> commits{0};
        bool damage = FaultInjection::instance().damage_state(++commits);
        auto stored = store->commit_unit(entry_of(r, seed, start_s, end_s), r.state, damage);
        if (!stored.ok()) return to_error(stored.status());
        // A test may stop here: the unit is durable but not yet acknowledged.
        FaultInjection::instance().crash_point("after_commit");
        return std::move(stored).value();
      },
      [store](copy_atom, const state_copy& copy) -> caf::result<bool> {
        auto params = nlohmann::json::parse(copy.params_json, nullptr, false);
        if (params.is_discarded())
          return to_error(Status::invalid_argument(
              fmt::format("config {}: the copy's hyper-parameters are not JSON", copy.to)));
        auto copied = store->copy_epoch_state(copy.from, copy.from_epoch, copy.to, params);
        if (!copied.ok()) return to_error(copied);
        return true;
      },
      [store](decision_atom, const SearchDecision& decision) -> caf::result<bool> {
        auto stored = store->put_decision(to_json(decision));
        if (!stored.ok()) return to_error(stored);
        return true;
      },
      [store](decision_atom, const std::string& user_action_json) -> caf::result<bool> {
        auto record = nlohmann::json::parse(user_action_json, nullptr, false);
        if (record.is_discarded()) return to_error(Status::invalid_argument("a user action record is not JSON"));
        auto stored = store->put_decision(record);
        if (!stored.ok()) return to_error(stored);
        return true;
      },
      // Fails with the store's code: corruption only when the state fails its
      // checksum (the scheduler then rolls back), io_error or not_found else.
      [store](latest_atom, ConfigId config) -> caf::result<StateBytes> {
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
