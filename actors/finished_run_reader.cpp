#include "actors/finished_run_reader.hpp"

#include <memory>

#include <fmt/format.h>

#include "actors/experiment_steering.hpp"
#include "runtime/api/finished_runs.hpp"
#include "runtime/net/atoms.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

namespace {

// What an answer depends on besides the store.
std::string answer_key(const control_request& r) {
  return fmt::format("{}/{}/{}/{}", to_string(r.command), r.config, r.rows, r.since);
}

}  // namespace

finished_run_reader_actor::behavior_type finished_run_reader(finished_run_reader_actor::pointer) {
  auto runs = std::make_shared<api::FinishedRuns>();
  return {
      [runs](control_atom, const control_request& r, const std::string& run_dir,
             uint64_t generation) -> caf::result<control_reply> {
        control_reply reply;
        reply.experiment = r.experiment;
        if (r.command == SteeringCommand::export_model || r.command == SteeringCommand::run_file) {
          // A file: read or written afresh each time (it is large and rarely asked for).
          auto store = runs->store(r.experiment, run_dir, generation);
          if (!store.ok()) return make_error(store.code(), store.error());
          auto exported = answer_from_store(**store, r, run_dir, false);
          if (!exported.ok()) return make_error(exported.code(), exported.error());
          exported->experiment = r.experiment;
          return std::move(exported).value();
        }
        auto json = runs->answer(r.experiment, run_dir, generation, answer_key(r),
                                 [&](const StateStore& store) -> Result<std::string> {
                                   auto answered = answer_from_store(store, r, run_dir, false);
                                   if (!answered.ok()) return answered.status();
                                   return answered->json;
                                 });
        if (!json.ok()) return make_error(json.code(), json.error());
        reply.json = std::move(json).value();
        return reply;
      },
      [runs](drop_store_atom, const std::string& experiment) { runs->drop(experiment); },
  };
}

finished_run_reader_actor spawn_finished_run_reader(caf::local_actor* gateway) {
  return gateway->spawn<caf::detached + caf::linked>(finished_run_reader);
}

}  // namespace cerebro
