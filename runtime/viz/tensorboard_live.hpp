#pragma once
// TensorBoard logs written while the run trains, so `tensorboard --logdir
// RUN_DIR/tensorboard` follows it (the layout of tensorboard.hpp):
//
//   - a config's event file is created at its first committed unit, with the
//     file version and its HParams session start (its params);
//   - at each committed validation (the end of one of its epochs) the
//     epoch's scalars are appended to it;
//   - at the end (finish) the epochs that never validated (a config stopped
//     mid-epoch), each config's session end and the experiment's HParams
//     record (RUN_DIR/tensorboard/events.out.tfevents...) are written.
//
// Records are only appended, each batch with one write(2), so a reader (or
// TensorBoard) that reads a file mid-run finds whole records; until the end
// the HParams tab builds its table from the sessions' start records, as
// TensorBoard does when a log has no experiment record.
//
// Not thread-safe: the run's runner owns it (actors/run_follower.cpp calls
// update after every progress report of the scheduler).

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/store/state_store.hpp"
#include "runtime/viz/run_view.hpp"
#include "runtime/viz/tensorboard.hpp"

namespace cerebro {

class LiveTensorBoard {
 public:
  // Clears RUN_DIR/tensorboard: a resumed (or recovered) run writes it again
  // from its whole unit log at the first update. An error names the directory.
  static Result<std::unique_ptr<LiveTensorBoard>> start(const std::string& run_dir, TensorBoardClock clock);

  // Appends what the store's units committed since the last update complete.
  Status update(const StateStore& store);
  // The same from `units` (committed, in commit order; units already seen are
  // skipped) and the configs' params.
  Status add(const std::vector<UnitLogEntry>& units, const std::map<ConfigId, nlohmann::json>& params);

  // Completes the logs at the end of the run (see above; `run` as
  // write_tensorboard_logs takes it). Returns every event file.
  Result<std::vector<std::string>> finish(const RunView& run);

  int64_t last_seq() const { return last_seq_; }
  // A write failed: later updates do nothing (the run finishes with
  // write_tensorboard_logs instead).
  bool failed() const { return failed_; }

 private:
  LiveTensorBoard(std::string root, TensorBoardClock clock);

  struct ConfigLog {
    std::string file;                 // its event file
    std::vector<UnitLogEntry> units;  // its committed units so far
    std::set<int32_t> written;        // epochs whose scalars are in the file
    double last_end_s = 0;
  };
  // The config's log, its file created (version and session start) if new.
  Result<ConfigLog*> config_log(ConfigId id, const nlohmann::json& params, double first_start_s);
  Status append(const std::string& file, const std::vector<std::string>& events);
  Status fail(Status status);

  std::string root_;
  TensorBoardClock clock_;
  std::map<ConfigId, ConfigLog> configs_;
  std::map<ConfigId, nlohmann::json> params_;
  int64_t last_seq_ = 0;
  bool failed_ = false;
};

}  // namespace cerebro
