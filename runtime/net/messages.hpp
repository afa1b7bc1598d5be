#pragma once
// The CAF side of the actors' messages (runtime/base/messages.hpp): one
// `inspect` per message type, the atoms, and the registration that lets the
// same actors talk within one process or across nodes through CAF's
// middleman.

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "runtime/base/messages.hpp"
#include "runtime/net/atoms.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/store/experiment_result.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unit_task& x) {
  return f(caf::meta::type_name("unit_task"), x.experiment, x.sample_shape, x.num_classes, x.task, x.target_stddev,
           x.beam, x.config, x.partition, x.epoch, x.attempt, x.seed, x.validate, x.augment_hflip,
           x.augment_crop_padding, x.read_ahead, x.params_json, x.state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unit_result& x) {
  return f(caf::meta::type_name("unit_result"), x.config, x.partition, x.epoch, x.worker, x.status, x.error, x.state,
           x.train_loss, x.examples, x.has_validation, x.val_loss, x.val_accuracy, x.val_metrics, x.restore_s,
           x.train_s, x.validate_s, x.save_s, x.result_s, x.pipeline_workers);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_update& x) {
  return f(caf::meta::type_name("progress_update"), x.units_done, x.units_total, x.elapsed_s, x.best_config,
           x.best_metric, x.event, x.epoch_low, x.epoch_high, x.running_workers, x.running_agents, x.running_units,
           x.units_failed, x.pareto_json);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, experiment_done& x) {
  return f(caf::meta::type_name("experiment_done"), x.wall_s, x.unit_span_s, x.error, x.damaged_state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_copy& x) {
  return f(caf::meta::type_name("state_copy"), x.from, x.from_epoch, x.to, x.params_json);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UnitLogEntry& x) {
  return f(caf::meta::type_name("unit_log_entry"), x.seq, x.config, x.partition, x.epoch, x.worker, x.status, x.seed,
           x.train_loss, x.examples, x.has_validation, x.val_loss, x.val_accuracy, x.val_metrics, x.start_s, x.end_s,
           x.train_s, x.validate_s, x.restore_s, x.save_s, x.state_checksum, x.state_bytes, x.rolled_back, x.gang,
           x.gang_size, x.result_s, x.pipeline_workers);
}

// An exploit decision's hyper-parameters (user data with arbitrary keys, see
// unit_task::params_json) travel as JSON text.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SearchDecision& x) {
  std::string params;
  if constexpr (Inspector::reads_state) params = x.params.dump();
  auto load = caf::meta::load_callback([&x, &params]() -> caf::error {
    x.params = nlohmann::json::parse(params, nullptr, false);
    if (x.params.is_discarded()) return caf::make_error(caf::sec::invalid_argument, "a decision's params are not JSON");
    return caf::none;
  });
  return f(caf::meta::type_name("search_decision"), x.config, x.epoch, x.kind, x.reason, x.source, x.source_epoch,
           params, load);
}

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
