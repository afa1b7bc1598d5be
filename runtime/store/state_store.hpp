#pragma once
// The durable state of one experiment, in RocksDB: configs, model states and
// the unit log. "Durable before acknowledged": commit_unit writes a unit's
// resulting state and its log entry in one synced batch, and only then may the
// scheduler count the unit as done. Thread-safe (RocksDB is, and the records
// kept in memory below have a lock); one StateStore per directory per process.
//
// The unit log and the config records are decoded once, at open, and kept in
// memory in step with every write this object makes: a reader (an API poll
// of a large run reads the whole log) copies or shares them instead of
// decoding JSON again. Only this object writes its directory (RocksDB's lock),
// and a read-only open sees no later write, so the copy cannot go stale.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/checksum.hpp"  // checksum_of: the states' checksum
#include "runtime/base/ids.hpp"
#include "runtime/base/lifecycle.hpp"
#include "runtime/base/status.hpp"

namespace rocksdb {
class DB;
}

namespace cerebro {

// Stored as {"status": "completed" | "diverged" | "failed" | "running" | "stopped", ...}.
struct ConfigRecord {
  ConfigId id = 0;
  nlohmann::json params;
  ConfigStatus status = ConfigStatus::running;
  std::string error;  // why it failed, for failed configs
};

struct UnitLogEntry {
  int64_t seq = 0;  // commit order, assigned by commit_unit
  ConfigId config = 0;
  PartitionId partition = 0;
  int32_t epoch = 0;
  WorkerId worker = 0;
  UnitStatus status = UnitStatus::ok;  // ok or diverged: a failed unit is not committed
  uint64_t seed = 0;
  double train_loss = 0;
  int64_t examples = 0;
  bool has_validation = false;  // the config's last unit of the epoch validates
  double val_loss = 0, val_accuracy = 0;
  std::map<std::string, double> val_metrics;  // named metrics of the task or template ("r2" ...)
  double start_s = 0, end_s = 0;              // dispatch and commit times, seconds since the run started
  // When the result reached the scheduler, which freed the worker then
  // (it trains on while the commit is written): start_s .. result_s is the worker's, result_s .. end_s the commit's
  // (end_s: when the synced write that made it durable began). Logs written
  // before it have none (-1): their end_s was the result's arrival.
  double result_s = -1;
  double worker_end_s() const { return result_s < 0 ? end_s : result_s; }
  double train_s = 0, validate_s = 0, restore_s = 0, save_s = 0;
  std::string state_checksum;
  int64_t state_bytes = 0;  // size of the resulting state (what hops)
  // The unit's state was lost (corrupt or missing in the store) and the unit
  // ran again: the entry stays as history but no longer counts.
  bool rolled_back = false;
  // Trained in a data-parallel gang: the gang's id (the seq of its
  // first entry) and its size; 0 and 0 for a unit trained alone.
  int64_t gang = 0;
  int32_t gang_size = 0;
  // Trained as a pipeline over k stages on k workers at once: the
  // crew, the driver (stage 0, `worker`) then the stages' hosts; empty for a
  // unit alone or in a gang.
  std::vector<WorkerId> pipeline_workers;
};

// How a unit trained, in words: "pipeline over 2 stages (workers 3, 1)" for
// a pipeline unit (runtime/scheduling/pipeline_dispatch.hpp pipeline_label),
// "gang of k" for a gang's, "alone" otherwise.
std::string trained_as(const UnitLogEntry& e);

nlohmann::json to_json(const UnitLogEntry& e);
// invalid_argument for a missing key, a value of the wrong type or an unknown status word.
Result<UnitLogEntry> unit_log_entry_from_json(const nlohmann::json& j);

// Per-epoch metrics of a config, derived from its unit log entries.
struct EpochMetrics {
  int32_t epoch = 0;
  double train_loss = 0;  // example-weighted over the epoch's units
  double val_loss = 0, val_accuracy = 0;
  std::map<std::string, double> val_metrics;
  double seconds = 0;  // compute seconds of the epoch's units
};
std::vector<EpochMetrics> epoch_metrics(const std::vector<UnitLogEntry>& log, ConfigId config);

class StateStore {
 public:
  // Opens (creating when `create`) the RocksDB directory `dir`. Both opens
  // read every unit-log entry, config record and decision once: a store with
  // one that does not parse (another build's, or damaged) fails to open with
  // invalid_argument naming it, so the readers below need no error of their own.
  static Result<std::unique_ptr<StateStore>> open(const std::string& dir, bool create);
  // Opens `dir` read-only (RocksDB's OpenForReadOnly: no lock is taken, so a
  // process or thread that has it open for writing is not disturbed; what it
  // writes later is not seen). Every write fails. For readers of ended runs
  // (runtime/api/finished_runs.hpp).
  static Result<std::unique_ptr<StateStore>> open_read_only(const std::string& dir);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  Status put_meta(const std::string& key, const std::string& value);
  std::optional<std::string> get_meta(const std::string& key) const;

  Status put_config(const ConfigRecord& record);
  std::vector<ConfigRecord> configs() const;

  // A config's state before its first unit (written once, at setup).
  Status put_initial_state(ConfigId config, const std::string& state);
  Result<std::string> initial_state(ConfigId config) const;

  // Writes the unit's resulting state and its log entry atomically and synced.
  // Returns the entry as stored (sequence number and checksum set). Keeps the initial state and the two
  // newest states of the config; older ones are deleted in the same batch.
  // `damage_for_test` (fault injection only) stores the state with one byte
  // flipped after its checksum was taken, as bit rot would.
  Result<UnitLogEntry> commit_unit(UnitLogEntry entry, const std::string& state, bool damage_for_test = false);
  // A data-parallel gang's k >= 2 units (one config, one epoch) and the one
  // state they produced, in one synced batch: all k entries or none. Each
  // entry gets its seq, gang = the first seq and gang_size = k; the state is
  // kept once, as of the last entry.
  Result<std::vector<UnitLogEntry>> commit_gang(std::vector<UnitLogEntry> entries, const std::string& state);

  // One unit of a group commit: its entry, its resulting state (borrowed for
  // the call) and the test-only damage flag of commit_unit.
  struct UnitCommit {
    UnitLogEntry entry;
    const std::string* state = nullptr;
    bool damage_for_test = false;
  };
  // Group commit: the units' states and log entries in ONE synced batch, so
  // units that finish together pay for one sync. Sequence numbers follow the
  // given order; each config keeps its two newest states (counting the ones
  // written here). All or nothing: on failure no unit is stored and the
  // sequence numbers are not used up. Returns the entries as stored, in order.
  Result<std::vector<UnitLogEntry>> commit_units(const std::vector<UnitCommit>& units);

  // The config's newest state (initial state when no unit committed yet),
  // verified against its checksum. Fails with corruption when the stored
  // bytes fail their checksum (only then is the state lost), not_found when
  // the config has no state at all, io_error when RocksDB cannot read it.
  Result<std::string> latest_state(ConfigId config) const;

  // The committed units in commit order (rolled-back ones excluded).
  std::vector<UnitLogEntry> unit_log() const;
  // The same, shared instead of copied: the log as it was at the call (a
  // later commit does not change what the caller holds).
  std::shared_ptr<const std::vector<UnitLogEntry>> unit_log_shared() const;
  // The committed units with a sequence number above `seq`, in commit order
  // (rolled-back ones excluded): the tail of unit_log() without reading it all.
  std::vector<UnitLogEntry> unit_log_after(int64_t seq) const;
  // Units whose state was lost and that had to run again, in commit order.
  std::vector<UnitLogEntry> rolled_back_units() const;

  // What recover_latest_state did for one config.
  struct Recovery {
    bool fell_back = false;                 // the newest state was corrupt or missing
    int64_t intact_seq = 0;                 // the newest intact state (0: the initial state)
    std::vector<UnitLogEntry> rolled_back;  // the config's units after it, to run again
    std::string problem;                    // what was wrong with the newer states
  };
  // Makes sure the config's newest state is intact: if it is not, deletes the
  // damaged states, falls back to the newest intact one (an older state, else
  // the initial state) and marks the config's units after it rolled back, in
  // one synced batch. Only states that fail their checksum count as damaged:
  // a read error fails (io_error) with nothing rolled back. Fails too when
  // not even the initial state is intact.
  Result<Recovery> recover_latest_state(ConfigId config);

  // Population based training copies a config's state as it was at the end
  // of an epoch: with this set, commit_unit also keeps every epoch-end state.
  void set_keep_epoch_states(bool keep) { keep_epoch_states_ = keep; }
  // Makes `from`'s state at the end of `from_epoch` the newest state of `to`
  // and records `to`'s new hyper-parameters, in one synced batch.
  Status copy_epoch_state(ConfigId from, int32_t from_epoch, ConfigId to, const nlohmann::json& params);

  // Epoch-boundary decisions of the search procedure, in the order made.
  Status put_decision(const nlohmann::json& decision);
  std::vector<nlohmann::json> decisions() const;
  // Replaces every recorded decision (a resumed run re-derives them from the
  // unit log, which after a roll-back has fewer epochs than before).
  Status replace_decisions(const std::vector<nlohmann::json>& decisions);

 private:
  explicit StateStore(rocksdb::DB* db);
  Status write_batch_synced(void* batch);
  // Reads and checks every log entry, config record and decision (open).
  Status load_records();
  // Adds newly committed entries to the log kept in memory.
  void remember_committed(const std::vector<UnitLogEntry>& entries);
  rocksdb::DB* db_;
  mutable std::mutex records_mutex_;
  // Not rolled back, in commit order. Shared with readers of
  // unit_log_shared(): replaced, not changed, while one holds it.
  std::shared_ptr<std::vector<UnitLogEntry>> committed_ = std::make_shared<std::vector<UnitLogEntry>>();
  std::vector<UnitLogEntry> rolled_back_;  // in commit order
  std::map<ConfigId, ConfigRecord> configs_;
  int64_t next_seq_ = 1;
  int64_t next_decision_ = 1;
  bool keep_epoch_states_ = false;
};

}  // namespace cerebro
