#pragma once
// MopBook: the bookkeeping of Model Hopper Parallelism. It knows which units are
// pending, which run where, and which partitions each worker holds, and it
// ENFORCES the MOP invariants: every misuse is a contract violation
// (runtime/base/contract.hpp: it aborts) naming the operation and the unit,
// config or worker involved, so a buggy caller cannot corrupt a schedule.
//
//  - completeness: per epoch a config trains on every partition exactly once;
//  - isolation:    a config trains in at most one place at a time;
//  - a worker runs one unit at a time, on a partition it holds;
//  - no preemption: a running unit ends only by complete(), requeue() or the
//    removal of its worker.
//
// A data-parallel gang is one attempt of one config over k >= 2
// of its pending partitions of the current epoch at once, each on a
// different idle worker holding it: start_gang(), complete_gang() (all k
// units count at once: a gang commits as a whole or not at all) and
// requeue_gang(). Isolation then means one *attempt* at a time: the config is
// busy until every member has ended.
//
// Epochs are per config: a config enters its next epoch as soon as it finished
// all partitions of the current one and advance() is called (the search
// procedure said "continue"); there is no global barrier.
//
// The book decides nothing: a SchedulingPolicy picks among eligible_units().
// Not thread-safe; it is owned by one scheduler (actor or simulator).
//
// Cost: eligible_units() scans every config, which is fine for a real cluster
// but not for simulating 10,000 configs on 1,000 workers. So the book also keeps
// an index, per partition, of the configs whose current epoch still needs it
// (count_needing, config_needing, for_each_config_needing): a bitset over
// config slots, 1.25 KB per partition for 10,000 configs, so it stays in cache.
// start/complete/requeue run in O(1), advance/stop/fail in O(partitions).

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/scheduling/partition_set.hpp"

namespace cerebro {

enum class ConfigState {
  pending_epoch,      // the current epoch has units left (pending or running)
  awaiting_decision,  // the current epoch is complete; waiting for advance()/stop()/fail()
  finished,           // all planned epochs done
  stopped,            // stopped early by the search procedure
  failed,             // given up on (e.g. its training keeps failing)
};

std::string to_string(ConfigState state);
inline std::ostream& operator<<(std::ostream& os, ConfigState state) { return os << to_string(state); }

class MopBook {
 public:
  // Partitions are numbered 0 .. num_partitions-1.
  explicit MopBook(int32_t num_partitions);

  int32_t num_partitions() const { return num_partitions_; }

  // Registers worker w holding the given partitions, or replaces the holdings of
  // a known worker (a running unit keeps running even if its partition is gone).
  void add_worker(WorkerId w, std::vector<PartitionId> holds);
  // Removes worker w. Its in-flight unit, if any, is pending again and returned;
  // nullopt if it was idle or its config was stopped/failed meanwhile (then the
  // unit is simply dropped).
  std::optional<Unit> remove_worker(WorkerId w);
  bool has_worker(WorkerId w) const {
    int32_t slot = worker_slots_.find(w);
    return slot >= 0 && workers_[slot].present;
  }
  // Whether config c was added (the queries about an unknown one are contract
  // violations: ask first where an id comes from outside the book's users).
  bool has_config(ConfigId c) const { return config_slots_.find(c) >= 0; }
  // The partitions w holds, ascending (a vector: policies walk it per decision).
  const std::vector<PartitionId>& holdings(WorkerId w) const { return worker_entry(w, "holdings").holds; }
  bool holds(WorkerId w, PartitionId p) const {
    const WorkerEntry& worker = worker_entry(w, "holds");
    return p >= 0 && p < num_partitions_ && worker.held.contains(p);
  }

  // Adds config c planned for `epochs` epochs in total (0 .. epochs-1). It joins
  // at first_epoch (e.g. when resuming: epochs before it are already done); with
  // first_epoch == epochs it is already finished.
  void add_config(ConfigId c, int32_t epochs, int32_t first_epoch = 0);

  // The units worker w may start now: configs in pending_epoch and idle, their
  // current epoch's pending partitions that w holds. Empty if w is busy.
  // Sorted by (config, partition). Like every query, a contract violation for an unknown id.
  std::vector<Unit> eligible_units(WorkerId w) const;
  // Known workers with no running unit, ascending.
  std::vector<WorkerId> idle_workers() const;
  // Known workers, ascending.
  std::vector<WorkerId> workers() const;

  // Fast queries for policies and simulators that cannot afford eligible_units().
  // The configs in pending_epoch whose current epoch still needs partition p
  // (not done, not running), busy ones included: the units of p eligible for an
  // idle holder of p are those of the configs here that are not config_busy().
  // They are ordered by when the config was added. count_needing is O(1),
  // config_needing(p, k) (the k-th, 0 <= k < count) O(configs / 512 + 8).
  int32_t count_needing(PartitionId p) const;
  ConfigId config_needing(PartitionId p, int32_t k) const;
  // Among those, the ones not config_busy(): how many, and the k-th
  // (0 <= k < count_idle_needing(p)). O(configs / 64) each.
  int32_t count_idle_needing(PartitionId p) const;
  ConfigId idle_config_needing(PartitionId p, int32_t k) const;
  // Whether count_idle_needing(p) > 0: stops at the first such config, so it is
  // cheaper when there is one (O(configs / 64) when there is none).
  bool has_idle_needing(PartitionId p) const;
  // The config added position-th (0 <= position < config_count()) if it is
  // among those, else nullopt: O(1), for rejection sampling when many are.
  std::optional<ConfigId> config_needing_at(PartitionId p, int32_t position) const;
  template <typename F>
  void for_each_config_needing(PartitionId p, F&& f) const {
    needers(p, "for_each_config_needing").for_each([&](int32_t slot) { f(hot_[slot].id); });
  }
  // pending_partitions(c) as a set.
  const PartitionSet& pending_set(ConfigId c) const;
  bool worker_busy(WorkerId w) const;
  // A hint, no effect on the book's state: config c will be completed,
  // queried or started soon, so its entry is fetched into the cache now. The
  // simulator calls it one event ahead (at 10^8 units the entries of 10,000
  // configs do not stay in cache, and each unit's end touches its config).
  void prefetch(ConfigId c) const {
    int32_t slot = config_slots_.find(c);
    if (slot < 0) return;
    const ConfigEntry& config = configs_[slot];
    for (size_t line = 0; line < sizeof(ConfigEntry); line += 64) {
      __builtin_prefetch(reinterpret_cast<const char*>(&config) + line);
    }
    __builtin_prefetch(&hot_[slot]);
  }

  // Starts unit u on worker w; a contract violation unless u is eligible for w.
  void start(WorkerId w, const Unit& u);
  // Whether start(w, u) keeps the invariants now: failed_precondition naming
  // what is wrong when it does not (a unit log being restored checks its
  // units so, before it starts them).
  Status can_start(WorkerId w, const Unit& u) const;
  // Unit u finished on w. Returns true when it was the last unit of its config's
  // epoch: the config is then awaiting_decision. If the config was stopped or
  // failed while u ran, the completion is ignored (not counted) and false returned.
  bool complete(WorkerId w, const Unit& u);
  // The attempt of u on w failed: w is idle and u pending again (dropped if its
  // config was stopped or failed meanwhile).
  void requeue(WorkerId w, const Unit& u);

  // Handing over for commit: u's result left worker w and is being
  // made durable. w is idle at once (it may start a unit of another config);
  // u's config stays busy (isolation: none of its units starts) and u is
  // neither pending nor running until complete_handed_over() counts it or
  // requeue_handed_over() makes it pending again (its commit failed). Removing
  // w meanwhile does not touch u. Throws as complete() does unless w runs u
  // alone (a gang's members are not handed over).
  void hand_over(WorkerId w, const Unit& u);
  // u's commit is durable: it counts as complete() counts it (ignored if its
  // config was stopped or failed meanwhile). Throws unless u is handed over.
  bool complete_handed_over(const Unit& u);
  // u's commit failed: u is pending again (dropped if its config ended).
  void requeue_handed_over(const Unit& u);
  // The unit of c handed over for commit, if any.
  std::optional<Unit> handed_over(ConfigId c) const { return config_entry(c, "handed_over").handed_over; }
  // Units handed over whose commit has not answered yet.
  int64_t handed_over_units() const { return handed_over_units_; }

  // A gang member: worker and the unit (config, partition, epoch) it runs.
  struct GangMember {
    WorkerId worker = 0;
    Unit unit;
  };
  // Starts a gang: every member's unit must be eligible for its worker as in
  // start(), all of one config and epoch, k >= 2 distinct workers and
  // partitions. Anything else is a contract violation naming the member at
  // fault.
  void start_gang(const std::vector<GangMember>& members);
  // Whether start_gang(members) keeps the invariants now: failed_precondition
  // naming the member at fault when it does not (a unit log being restored
  // checks its logged gangs so, before it starts them).
  Status can_start_gang(const std::vector<GangMember>& members) const;
  // The gang ended well: exactly the members of the running gang (all of
  // them, none removed since) are freed and their units count. Returns true
  // when that ended the config's epoch, as complete() does.
  bool complete_gang(const std::vector<GangMember>& members);
  // The gang's attempt failed: the members still present are freed and every
  // member's unit is pending again (members already removed by
  // remove_worker() are skipped: their unit is pending already).
  void requeue_gang(const std::vector<GangMember>& members);
  // Whether w runs a unit as a member of a gang.
  bool in_gang(WorkerId w) const { return worker_entry(w, "in_gang").in_gang; }
  // How many units of c run now (0, 1 for MOP, k for a gang of k).
  int32_t running_units(ConfigId c) const { return config_entry(c, "running_units").running_count; }

  // Decisions at an epoch boundary (config must be awaiting_decision for
  // advance). advance() enters the next epoch, or finishes the config after its
  // last planned one.
  void advance(ConfigId c);
  // Valid in pending_epoch or awaiting_decision, also while a unit of c runs:
  // that unit's completion is then ignored.
  void stop(ConfigId c);
  void fail(ConfigId c);

  ConfigState state(ConfigId c) const;
  // The config's current epoch (for a finished config: its planned epoch count).
  int32_t epoch(ConfigId c) const;
  int32_t planned_epochs(ConfigId c) const;
  bool config_busy(ConfigId c) const;
  std::optional<Unit> running_on(WorkerId w) const;
  // Partitions of c's current epoch neither done nor running, ascending.
  std::vector<PartitionId> pending_partitions(ConfigId c) const;

  // Units planned for this book: (epochs - first_epoch) x partitions per config,
  // except that a stopped or failed config counts only the units it completed,
  // so units_done() == units_total() once all_done().
  int64_t units_total() const;
  // Completed (counted) units since the book was created.
  int64_t units_done() const;
  // Every config finished, stopped or failed, and no unit running or handed over.
  bool all_done() const;
  std::vector<ConfigId> configs() const;
  // configs().size(), in O(1): a policy caching configs() sees when to refresh.
  size_t config_count() const { return configs_.size(); }
  // Units c still has to do, its running unit included (0 once it is done).
  int64_t remaining_units(ConfigId c) const;
  // state, epoch, planned_epochs, remaining_units and config_busy of c in one
  // lookup, for policies that sweep every config.
  struct ConfigSummary {
    ConfigState state;
    int32_t epoch;
    int32_t planned_epochs;
    int64_t remaining_units;
    bool busy;
  };
  ConfigSummary summary(ConfigId c) const;

 private:
  // Maps ids to slots of a vector: small non-negative ids (the usual case)
  // through a vector, others through a hash map. Slots are never reused.
  class IdSlots {
   public:
    static constexpr int32_t kDenseIds = 1 << 20;
    // -1 if the id has no slot. Inline: every call of the book starts here.
    int32_t find(int32_t id) const {
      // dense_ never grows past kDenseIds: an id below its size is dense.
      if (static_cast<uint32_t>(id) < dense_.size()) return dense_[static_cast<uint32_t>(id)];
      return id >= 0 && id < kDenseIds ? -1 : find_sparse(id);
    }
    int32_t insert(int32_t id);  // a new slot for a new id
   private:
    int32_t find_sparse(int32_t id) const;
    std::vector<int32_t> dense_;
    std::unordered_map<int32_t, int32_t> sparse_;
    int32_t next_ = 0;
  };
  // A set of slots as a bitset with a count per block of 512, for select().
  class SlotSet {
   public:
    void insert(int32_t slot);  // grows as needed
    void erase(int32_t slot);
    int32_t count() const { return count_; }
    bool contains(int32_t slot) const {
      size_t word = static_cast<size_t>(slot) / 64;
      return word < words_.size() && ((words_[word] >> (slot % 64)) & 1u);
    }
    int32_t select(int32_t k) const;  // the k-th smallest slot, 0 <= k < count()
    // The slots also in other: how many, and the k-th smallest (-1 if k >= that).
    int32_t count_common(const SlotSet& other) const;
    // count_common, leaving each word's count in counts for
    // select_common_counted (a draw right after a count reads the counts to
    // find its word instead of the words).
    int32_t count_common_words(const SlotSet& other, std::vector<uint16_t>& counts) const;
    int32_t select_common_counted(const SlotSet& other, const std::vector<uint16_t>& counts, int32_t k) const;
    // Bumped by every insert and erase: tells whether counts taken earlier hold.
    uint64_t version() const { return version_; }
    bool intersects(const SlotSet& other) const;
    int32_t select_common(const SlotSet& other, int32_t k) const;
    template <typename F>
    void for_each(F&& f) const {
      for (size_t i = 0; i < words_.size(); ++i) {
        for (uint64_t word = words_[i]; word; word &= word - 1) {
          f(static_cast<int32_t>(i * 64 + __builtin_ctzll(word)));
        }
      }
    }

   private:
    static constexpr size_t kWordsPerBlock = 8;
    std::vector<uint64_t> words_;
    std::vector<int32_t> block_counts_;
    int32_t count_ = 0;
    uint64_t version_ = 0;
  };
  struct WorkerEntry {
    bool present = false;            // removed workers keep their slot
    std::vector<PartitionId> holds;  // ascending, no duplicates
    PartitionSet held;               // holds, for O(1) membership
    std::optional<Unit> running;
    bool in_gang = false;  // running is one member of a gang
  };
  // Cache-line aligned, the scalars first: starting or completing a unit
  // touches the first line and the line of one pending word.
  struct alignas(64) ConfigEntry {
    ConfigId id = 0;
    int32_t epochs = 0;
    int32_t first_epoch = 0;
    int32_t epoch = 0;
    ConfigState state = ConfigState::pending_epoch;
    int32_t slot = 0;
    std::optional<WorkerId> running_on;  // a member, while any runs
    int32_t running_count = 0;           // 1 for MOP, the members left for a gang
    std::optional<Unit> handed_over;     // on no worker, its commit under way
    int64_t units_done = 0;
    PartitionSet pending;  // current epoch, not done, not running
  };

  // The entry of a known id; a contract violation naming the operation otherwise.
  WorkerEntry& worker_entry(WorkerId w, const char* operation) {
    int32_t slot = worker_slots_.find(w);
    if (slot < 0 || !workers_[slot].present) unknown_worker(w, operation);
    return workers_[slot];
  }
  const WorkerEntry& worker_entry(WorkerId w, const char* operation) const {
    int32_t slot = worker_slots_.find(w);
    if (slot < 0 || !workers_[slot].present) unknown_worker(w, operation);
    return workers_[slot];
  }
  int32_t config_slot(ConfigId c, const char* operation) const {
    int32_t slot = config_slots_.find(c);
    if (slot < 0) unknown_config(c, operation);
    return slot;
  }
  ConfigEntry& config_entry(ConfigId c, const char* operation) {
    int32_t slot = config_slots_.find(c);
    if (slot < 0) unknown_config(c, operation);
    return configs_[slot];
  }
  const ConfigEntry& config_entry(ConfigId c, const char* operation) const {
    int32_t slot = config_slots_.find(c);
    if (slot < 0) unknown_config(c, operation);
    return configs_[slot];
  }
  [[noreturn]] static void unknown_worker(WorkerId w, const char* operation);
  [[noreturn]] static void unknown_config(ConfigId c, const char* operation);
  [[noreturn]] void bad_partition(PartitionId p, const char* operation) const;
  [[noreturn]] void bad_position(int32_t position) const;
  // Checks that w is running exactly u and frees w; returns u's config entry.
  ConfigEntry& finish_attempt(WorkerId w, const Unit& u, const char* operation);
  // Frees the config of one unit that ended; it is idle again after the last.
  void release_config(ConfigEntry& config);
  // What is wrong with starting u on w; empty when nothing is.
  std::string start_problem(WorkerId w, const Unit& u) const;
  // What is wrong with a gang's members against their config and the
  // workers (starting it, or ending the one running); empty when nothing is.
  std::string gang_problem(const std::vector<GangMember>& members, bool starting) const;
  // The same, as a contract violation of `operation`.
  void check_gang(const std::vector<GangMember>& members, const char* operation, bool starting) const;
  void end_config(ConfigId c, ConfigState final_state, const char* operation);
  const SlotSet& needers(PartitionId p, const char* operation) const;
  // Keep pending and needers_ in step.
  void make_pending(ConfigEntry& config, PartitionId p);
  void make_not_pending(ConfigEntry& config, PartitionId p);
  void make_all_pending(ConfigEntry& config);
  void clear_pending(ConfigEntry& config);

  int32_t num_partitions_;
  IdSlots worker_slots_;
  std::vector<WorkerEntry> workers_;
  std::map<WorkerId, int32_t> present_workers_;  // id -> slot, ascending ids
  IdSlots config_slots_;
  std::vector<ConfigEntry> configs_;
  // Per slot, copies of what policies read for every candidate config, packed
  // (12 bytes) so they stay in cache while the entries do not.
  struct HotConfig {
    ConfigId id = 0;
    int32_t epoch = 0;
    bool busy = false;
  };
  std::vector<HotConfig> hot_;
  SlotSet idle_;                              // slots of the configs with no running unit
  std::map<ConfigId, int32_t> config_order_;  // id -> slot, ascending ids
  std::vector<SlotSet> needers_;              // per partition: slots of the configs needing it
  // What the last count_idle_needing counted, per word, while neither set has
  // changed: idle_config_needing(p, k) right after it (a uniform draw) then
  // reads the counts instead of the words.
  struct IdleCount {
    PartitionId partition = -1;
    uint64_t needers_version = 0;
    uint64_t idle_version = 0;
    std::vector<uint16_t> counts;  // per word of the index
  };
  mutable IdleCount last_idle_count_;
  int64_t units_done_ = 0;
  int64_t live_configs_ = 0;  // neither finished, stopped nor failed
  int64_t running_units_ = 0;
  int64_t handed_over_units_ = 0;
  // Checks that u is c's unit handed over and ends that state; returns c.
  ConfigEntry& take_handed_over(const Unit& u, const char* operation);
};

// The queries policies call per candidate, inline.
inline ConfigState MopBook::state(ConfigId c) const { return config_entry(c, "state").state; }
inline int32_t MopBook::epoch(ConfigId c) const { return hot_[config_slot(c, "epoch")].epoch; }
inline bool MopBook::config_busy(ConfigId c) const { return hot_[config_slot(c, "config_busy")].busy; }
inline const PartitionSet& MopBook::pending_set(ConfigId c) const { return config_entry(c, "pending_set").pending; }
inline bool MopBook::worker_busy(WorkerId w) const { return worker_entry(w, "worker_busy").running.has_value(); }
inline int32_t MopBook::count_needing(PartitionId p) const { return needers(p, "count_needing").count(); }
inline std::optional<ConfigId> MopBook::config_needing_at(PartitionId p, int32_t position) const {
  // Slots are handed out in order of add_config: slot == position.
  if (position < 0 || static_cast<size_t>(position) >= configs_.size()) bad_position(position);
  if (!needers(p, "config_needing_at").contains(position)) return std::nullopt;
  return hot_[position].id;
}
inline const MopBook::SlotSet& MopBook::needers(PartitionId p, const char* operation) const {
  if (p < 0 || p >= num_partitions_) bad_partition(p, operation);
  return needers_[p];
}

}  // namespace cerebro
