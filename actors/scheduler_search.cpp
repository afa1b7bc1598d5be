// The scheduler actor's changes of the schedule from outside the units: the
// search procedure's (its decisions persisted, its proposed configs made
// durable, PBT's state copies carried out) and a person's steering.
#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/search/search_space.hpp"

namespace cerebro::scheduler_detail {

namespace {

// Configs the search proposed (tpe): durable before they are scheduled. A
// rejected one frees its slot, and the search may propose again.
void make_proposals(scheduler_ptr self) {
  auto& control = *self->state.config.control;
  for (auto proposals = control.take_proposals(); !proposals.empty(); proposals = control.take_proposals()) {
    for (const auto& p : proposals) {
      auto& create = self->state.config.create_config;
      Result<int32_t> made = create ? create(p.config, p.params)
                                    : Result<int32_t>(Status::failed_precondition("this run cannot create configs"));
      if (made.ok()) {
        self->state.config.params_json[p.config] = p.params.dump();
        // A pipeline config's stages are set as it joins: none of its units runs whole.
        control.on_config_created(p.config, *made);
        report(self, fmt::format("config {} proposed by {} ({}): {}{}", p.config, control.search().name(), p.reason,
                                 describe_params(p.params),
                                 *made >= 2 ? fmt::format("; it trains as a pipeline over {} stages", *made) : ""));
      } else {
        report(self, control.on_config_rejected(p.config, made.error()));
      }
    }
  }
}

}  // namespace

// Persists the search procedure's decisions and carries out its state copies
// (PBT): a copied-into config is dispatched only after its copy is durable.
void apply_search(scheduler_ptr self) {
  auto& control = *self->state.config.control;
  make_proposals(self);
  for (const auto& d : control.take_decisions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, d)
        .then([](bool) {},
              [self](const caf::error& e) { report(self, "cannot record a decision: " + caf::to_string(e)); });
  for (const auto& copy : control.take_state_copies()) {
    self->state.states->forget(copy.to);  // written by the copy now: read it back from the store
    auto params = copy.params.dump();
    self->request(self->state.config.checkpoint, caf::infinite, copy_atom::value,
                  state_copy{copy.from, copy.from_epoch, copy.to, params})
        .then(
            [self, copy, params](bool) {
              self->state.config.params_json[copy.to] = params;
              report(self, self->state.config.control->on_state_copied(copy.to));
              apply_search(self);
              dispatch(self);
            },
            [self, copy](const caf::error& e) {
              report(self, self->state.config.control->on_state_copy_failed(copy.to, caf::to_string(e)));
              apply_search(self);
              dispatch(self);
            });
  }
}

// A person's steering (actors/experiment_steering.cpp prepares it, the run
// follower sends it): applied to the control, its record persisted with the
// decisions, then dispatch.
caf::result<bool> steer(scheduler_ptr self, SteeringCommand command, ConfigId config, const std::string& params_json,
                        int32_t epochs, ConfigId cloned_from, int32_t stages) {
  auto& control = *self->state.config.control;
  Status applied = Status::invalid_argument(fmt::format("\"{}\" does not change the schedule", to_string(command)));
  switch (command) {
    case SteeringCommand::pause: applied = control.pause(); break;
    case SteeringCommand::resume: applied = control.resume(); break;
    case SteeringCommand::stop: applied = control.stop_config(config); break;
    case SteeringCommand::add:  // a clone arrives as an add with cloned_from
      // With its pipeline stages (the steering planned them and recorded
      // them in the store's meta): set before anything is dispatched again.
      applied = control.add_config_by_user(config, epochs, nlohmann::json::parse(params_json), cloned_from, stages);
      if (applied.ok()) self->state.config.params_json[config] = params_json;
      break;
    default: break;
  }
  if (!applied.ok()) return to_error(applied);
  for (const auto& record : control.take_user_actions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, record.dump())
        .then([](bool) {},
              [self](const caf::error& e) { report(self, "cannot record a user action: " + caf::to_string(e)); });
  report(self, command == SteeringCommand::stop ? fmt::format("config {} stopped by the user", config)
               : command == SteeringCommand::add
                   ? fmt::format("config {} added by the user{}", config,
                                 stages >= 2 ? fmt::format("; it trains as a pipeline over {} stages", stages) : "")
                   : to_string(command) + "d by the user");
  apply_search(self);  // a stop may unblock the procedure's waiting decisions
  dispatch(self);
  return true;
}

}  // namespace cerebro::scheduler_detail
