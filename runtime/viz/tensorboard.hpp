#pragma once
// TensorBoard logs of a run, written as TensorFlow's event files (TFRecord
// framing of serialized Event protobufs, see tfrecord.hpp) so TensorBoard
// reads them without TensorFlow:
//
//   RUN_DIR/tensorboard/events.out.tfevents.<time>.<host>
//       the HParams plugin's experiment: every hyper-parameter with its type
//       and domain, and the metrics (val_accuracy, val_loss, train_loss)
//   RUN_DIR/tensorboard/config-<id>/events.out.tfevents.<time>.<host>
//       per epoch (step = epoch): scalars train_loss, val_loss, val_accuracy
//       and epoch_seconds; and the config's HParams session (its params at
//       start, its status at the end), so the HParams tab compares configs.
//
// The messages follow TensorFlow's event.proto and summary.proto and the
// HParams plugin's plugin_data.proto and api.proto, by field number.

#include <string>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/viz/run_view.hpp"

namespace cerebro {

// Where the log's times sit on the clock: `start_unix_s` is the Unix time
// of the log's second 0 (the run's start).
// Event files are named after `host` (runtime/base/log_lines.hpp: host_name()).
struct TensorBoardClock {
  double start_unix_s = 0;
  std::string host = "localhost";
};

// The serialized Event messages, one per function (for the writer and its tests).
namespace tensorboard_events {
// Event{wall_time, file_version: "brain.Event:2"}: an event file's first record.
std::string file_version(double wall_time);
// Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string scalar(double wall_time, int64_t step, const std::string& tag, float value);
// The HParams plugin's experiment record (tag "_hparams_/experiment").
std::string hparams_experiment(double wall_time, const RunView& run);
// A config's session start (its params; tag "_hparams_/session_start_info").
std::string session_start(double wall_time, const Standing& config);
// A config's session end (its status; tag "_hparams_/session_end_info").
std::string session_end(double wall_time, const Standing& config);
// One epoch's scalars: train_loss and epoch_seconds, and when the epoch
// validated val_loss, val_accuracy and the task's other metrics.
std::vector<std::string> epoch_scalars(double wall_time, const EpochMetrics& epoch, bool validated);
}  // namespace tensorboard_events

// "config-<id>": a config's directory under RUN_DIR/tensorboard.
std::string tensorboard_config_dir(ConfigId id);
// "events.out.tfevents.<time>.<host>" (the host kept to safe characters).
std::string tensorboard_event_file_name(double wall_time, std::string host);

// Writes RUN_DIR/tensorboard, replacing an earlier one as a whole (the files
// are written in RUN_DIR/tensorboard.tmp, which is then renamed; on failure
// nothing of it is left). Returns the files written.
Result<std::vector<std::string>> write_tensorboard_logs(const std::string& run_dir, const RunView& run,
                                                        const TensorBoardClock& clock);

}  // namespace cerebro
