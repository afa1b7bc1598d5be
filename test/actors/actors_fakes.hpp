#pragma once
// Fake actors for the deterministic actor tests (CAF's test DSL): workers,
// a checkpoint and a listener that implement the real typed interfaces
// (runtime/net/interfaces.hpp) and answer as the test directs. Nothing here
// trains, touches RocksDB or opens a socket: the test drives the protocol
// one message at a time.

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <caf/all.hpp>
#include <fmt/format.h>

#include "actors/actors.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/net/pipeline_tasks.hpp"

namespace cerebro::fakes {

// The test to a fake: answer what you hold. A promise is delivered by its
// own actor, inside one of its handlers (delivered from the test's thread
// it would be sent with no execution context).
using answer_atom = caf::atom_constant<caf::atom("answer")>;

using UnitKey = std::tuple<ConfigId, PartitionId, int32_t>;
inline UnitKey key_of(const unit_task& t) { return {t.config, t.partition, t.epoch}; }
inline UnitKey key_of(const unit_result& r) { return {r.config, r.partition, r.epoch}; }

// The state a fake worker's unit produces: it names the unit, so a test can
// tell which state a later unit started from.
inline std::string state_after(const unit_task& t) {
  return fmt::format("after c{} p{} e{}", t.config, t.partition, t.epoch);
}

inline unit_result good_result(const unit_task& t) {
  unit_result r;
  r.config = t.config;
  r.partition = t.partition;
  r.epoch = t.epoch;
  r.status = UnitStatus::ok;
  r.state = state_after(t);
  r.train_loss = 1;
  r.examples = 10;
  r.has_validation = t.validate;
  r.val_accuracy = 0.5;
  r.train_s = 1;
  return r;
}

// --- A worker: holds every task until the test answers it.
struct worker_state {
  std::vector<unit_task> trained;  // every unit task received, in order
  std::vector<std::pair<unit_task, caf::typed_response_promise<unit_result>>> units;  // not answered yet
  std::vector<gang_task> gang_tasks;  // every gang task received, in order
  std::vector<std::pair<gang_task, caf::typed_response_promise<gang_result>>> gangs;  // not answered yet
  static inline const char* name = "fake.worker";

  // Answers every unit task held with a good result.
  void finish_units() {
    for (auto& [task, promise] : units) promise.deliver(good_result(task));
    units.clear();
  }
  // Answers every gang task held: a good result, or the collective's failure.
  void finish_gangs(bool ok = true) {
    for (auto& [task, promise] : gangs) {
      gang_result r{good_result(task.unit), 10, 0.1};
      if (!ok) {
        r.unit.status = UnitStatus::failed;
        r.unit.error = "the collective failed: a peer is gone";
      }
      promise.deliver(std::move(r));
    }
    gangs.clear();
  }
};
// (answer_atom): every unit task held answered well; (answer_atom, ok): every
// gang task held answered, well or as the collective's failure.
using fake_worker_actor = worker_actor::extend<caf::reacts_to<answer_atom>, caf::reacts_to<answer_atom, bool>>;
using worker_actor_type = fake_worker_actor::stateful_base<worker_state>;

inline fake_worker_actor::behavior_type worker(fake_worker_actor::stateful_pointer<worker_state> self) {
  return {
      [self](answer_atom) { self->state.finish_units(); },
      [self](answer_atom, bool ok) { self->state.finish_gangs(ok); },
      [self](train_atom, unit_task& task) -> caf::result<unit_result> {
        auto promise = self->make_response_promise<unit_result>();
        self->state.trained.push_back(task);
        self->state.units.emplace_back(std::move(task), promise);
        return promise;
      },
      [self](gang_atom, gang_task& task) -> caf::result<gang_result> {
        auto promise = self->make_response_promise<gang_result>();
        self->state.gang_tasks.push_back(task);
        self->state.gangs.emplace_back(std::move(task), promise);
        return promise;
      },
      [](stage_host_atom, const stage_host_task&) -> caf::result<pipeline_stage_actor> {
        return make_error(StatusCode::unavailable, "a fake worker hosts no stage");
      },
      [](pipeline_atom, const pipeline_task&) -> caf::result<unit_result> {
        return make_error(StatusCode::unavailable, "a fake worker drives no pipeline");
      },
      [](release_atom, const std::string&) {},
  };
}

// --- A checkpoint: keeps the latest state per config in memory and counts
// each unit's commits; holds the commits until the test answers them when
// `hold` is set.
struct checkpoint_state {
  bool hold = false;
  std::map<ConfigId, StateBytes> latest;  // "init <c>" until a unit commits
  std::map<UnitKey, int> commits;         // durable commits per unit
  std::vector<UnitLogEntry> log;
  int gang_commits = 0;
  std::vector<std::pair<unit_result, caf::typed_response_promise<UnitLogEntry>>> held;
  std::vector<std::pair<std::vector<unit_result>, caf::typed_response_promise<std::vector<UnitLogEntry>>>> held_gangs;
  static inline const char* name = "fake.checkpoint";

  UnitLogEntry make_durable(const unit_result& r, int64_t gang = 0, int32_t gang_size = 0) {
    UnitLogEntry e;
    e.seq = static_cast<int64_t>(log.size()) + 1;
    e.config = r.config;
    e.partition = r.partition;
    e.epoch = r.epoch;
    e.worker = r.worker;
    e.examples = r.examples;
    e.train_loss = r.train_loss;
    e.train_s = r.train_s;
    e.has_validation = r.has_validation;
    e.val_accuracy = r.val_accuracy;
    e.gang = gang;
    e.gang_size = gang_size;
    latest[r.config] = r.state;
    ++commits[key_of(r)];
    log.push_back(e);
    return e;
  }
  std::vector<UnitLogEntry> make_gang_durable(const std::vector<unit_result>& members) {
    std::vector<UnitLogEntry> out;
    const int64_t gang = static_cast<int64_t>(log.size()) + 1;
    for (const auto& r : members) out.push_back(make_durable(r, gang, static_cast<int32_t>(members.size())));
    latest[members.front().config] = members.front().state;  // rank 0's
    ++gang_commits;
    return out;
  }
  // Answers every commit held: made durable.
  void answer_commits() {
    for (auto& [r, promise] : held) promise.deliver(make_durable(r));
    held.clear();
    for (auto& [members, promise] : held_gangs) promise.deliver(make_gang_durable(members));
    held_gangs.clear();
  }
};
// (answer_atom): every commit held made durable and answered.
using fake_checkpoint_actor = checkpoint_actor::extend<caf::reacts_to<answer_atom>>;
using checkpoint_actor_type = fake_checkpoint_actor::stateful_base<checkpoint_state>;

inline fake_checkpoint_actor::behavior_type checkpoint(fake_checkpoint_actor::stateful_pointer<checkpoint_state> self) {
  return {
      [self](answer_atom) { self->state.answer_commits(); },
      [self](commit_atom, unit_result& r, uint64_t, double, double) -> caf::result<UnitLogEntry> {
        if (!self->state.hold) return self->state.make_durable(r);
        auto promise = self->make_response_promise<UnitLogEntry>();
        self->state.held.emplace_back(std::move(r), promise);
        return promise;
      },
      [self](commit_gang_atom, gang_commit& g) -> caf::result<std::vector<UnitLogEntry>> {
        if (!self->state.hold) return self->state.make_gang_durable(g.members);
        auto promise = self->make_response_promise<std::vector<UnitLogEntry>>();
        self->state.held_gangs.emplace_back(std::move(g.members), promise);
        return promise;
      },
      [](flush_atom) {},
      [self](latest_atom, ConfigId config) -> caf::result<StateBytes> {
        auto it = self->state.latest.find(config);
        return it == self->state.latest.end() ? fmt::format("init {}", config) : it->second;
      },
      [](copy_atom, const state_copy&) { return true; },
      [](decision_atom, const SearchDecision&) { return true; },
      [](decision_atom, const std::string&) { return true; },
  };
}

// --- A listener: what the scheduler reports.
struct listener_state {
  std::vector<std::string> events;  // progress lines, empty ones left out
  std::optional<experiment_done> done;
  std::vector<WorkerId> workers_lost;
  static inline const char* name = "fake.listener";

  bool heard(const std::string& needle) const {
    for (const auto& e : events)
      if (e.find(needle) != std::string::npos) return true;
    return false;
  }
};
using listener_actor_type = scheduler_listener_actor::stateful_base<listener_state>;

inline scheduler_listener_actor::behavior_type listener(
    scheduler_listener_actor::stateful_pointer<listener_state> self) {
  return {
      [self](progress_atom, const progress_update& p) {
        if (!p.event.empty()) self->state.events.push_back(p.event);
      },
      [self](done_atom, const experiment_done& d) { self->state.done = d; },
      [self](worker_lost_atom, WorkerId id, const worker_actor&) { self->state.workers_lost.push_back(id); },
  };
}

// --- An agent: takes placements (at once, held until the test answers, or
// refused), records what it is told to release, respawns dead workers as
// fake ones.
struct agent_state {
  bool hold = false;
  bool refuse = false;
  std::vector<shard_placement> placed;  // every placement asked, in order
  std::vector<caf::typed_response_promise<bool>> held;
  std::vector<std::string> released;
  std::vector<fake_worker_actor> respawned;
  static inline const char* name = "fake.agent";

  // The partitions it was asked to hold (-1: the validation set), in order.
  std::vector<PartitionId> partitions() const {
    std::vector<PartitionId> out;
    for (const auto& p : placed) out.push_back(p.partition);
    return out;
  }
};
// (answer_atom): every placement held answered (held from now on).
using fake_agent_actor = agent_actor::extend<caf::reacts_to<answer_atom>>;
using agent_actor_type = fake_agent_actor::stateful_base<agent_state>;

inline fake_agent_actor::behavior_type agent(fake_agent_actor::stateful_pointer<agent_state> self) {
  return {
      [self](answer_atom) {
        for (auto& promise : self->state.held) promise.deliver(true);
        self->state.held.clear();
      },
      [](borrow_atom, const std::string&, PartitionId) -> caf::result<partition_lease> {
        return make_error(StatusCode::unavailable, "a fake agent lends nothing");
      },
      [self](place_atom, const shard_placement& placement) -> caf::result<bool> {
        self->state.placed.push_back(placement);
        if (self->state.refuse) return make_error(StatusCode::io_error, "the disk is full");
        if (!self->state.hold) return true;
        auto promise = self->make_response_promise<bool>();
        self->state.held.push_back(promise);
        return promise;
      },
      [self](release_atom, const std::string& experiment) { self->state.released.push_back(experiment); },
      [](const std::vector<worker_actor>&) {},
      [self](respawn_atom, caf::actor_id) -> caf::result<worker_actor> {
        auto fresh = self->spawn(worker);
        self->state.respawned.push_back(fresh);
        return worker_actor{fresh};
      },
  };
}

}  // namespace cerebro::fakes
