#pragma once
// The CAF side of the actors' messages (runtime/base/messages.hpp): one
// `inspect` per message type, the atoms, and the registration that lets the
// same actors talk within one process or across nodes through CAF's
// middleman.

#include <caf/all.hpp>

#include "runtime/base/messages.hpp"
#include "runtime/store/experiment_result.hpp"

namespace cerebro {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unit_task& x) {
  return f(caf::meta::type_name("unit_task"), x.experiment, x.sample_shape, x.num_classes, x.config, x.partition, x.epoch, x.attempt, x.seed, x.validate,
           x.params_json, x.state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unit_result& x) {
  return f(caf::meta::type_name("unit_result"), x.config, x.partition, x.epoch, x.worker, x.status, x.error,
           x.state, x.train_loss, x.examples, x.has_validation, x.val_loss, x.val_accuracy, x.restore_s, x.train_s,
           x.validate_s, x.save_s);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_update& x) {
  return f(caf::meta::type_name("progress_update"), x.units_done, x.units_total, x.elapsed_s, x.best_config,
           x.best_metric, x.event, x.epoch_low, x.epoch_high, x.running_workers, x.running_agents, x.running_units);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, experiment_done& x) {
  return f(caf::meta::type_name("experiment_done"), x.wall_s, x.unit_span_s, x.error, x.damaged_state);
}

using train_atom = caf::atom_constant<caf::atom("train")>;
using commit_atom = caf::atom_constant<caf::atom("commit")>;
using latest_atom = caf::atom_constant<caf::atom("latest")>;
using borrow_atom = caf::atom_constant<caf::atom("borrow")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using copy_atom = caf::atom_constant<caf::atom("copy")>;
using decision_atom = caf::atom_constant<caf::atom("decision")>;

// Registers every message type above with an actor system config, and the
// project's error category (runtime/net/error_category.hpp).
void register_message_types(caf::actor_system_config& config);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, leaderboard_entry& x) {
  return f(caf::meta::type_name("leaderboard_entry"), x.config, x.params_json, x.status, x.validated, x.metric);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, experiment_result& x) {
  return f(caf::meta::type_name("experiment_result"), x.experiment, x.run_dir, x.error, x.metric, x.wall_s,
           x.leaderboard, x.summary_json);
}

}  // namespace cerebro
