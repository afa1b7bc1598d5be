#include "runtime/scheduling/control_event.hpp"

#include <fmt/format.h>

#include "runtime/scheduling/pipeline_dispatch.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/metric.hpp"

namespace cerebro {

namespace {

using Kind = ControlEvent::Kind;

// One event's words. Gang and pipeline failures end in ": " because the
// attempt's failure count (the next event) says what follows for its units.
std::string words_of(const ControlEvent& e) {
  switch (e.kind) {
    case Kind::epoch_scored: {
      std::string line = fmt::format("config {} epoch {}: train_loss {:.4f} val_loss {:.4f}", e.config, e.epoch,
                                     e.train_loss, e.val_loss);
      for (const auto& [name, value] : validation_values(e.val_accuracy, e.val_metrics))
        line += fmt::format(" {} {:.4f}", name, value);
      return line;
    }
    case Kind::diverged: return fmt::format("config {} diverged (loss NaN/inf) in epoch {}", e.config, e.epoch);
    case Kind::decision: return "; " + to_string(*e.decision);
    case Kind::pilot_failed: return fmt::format("config {} failed its pilot check: {}", e.config, e.error);
    case Kind::attempt_failed:
      return fmt::format("{} failed (attempt {} of {}): {}", to_string(e.unit), e.count, e.limit, e.error);
    case Kind::config_gave_up:
      return fmt::format("config {} failed after {} attempts of {}: {}", e.config, e.count, to_string(e.unit), e.error);
    case Kind::config_failed: return fmt::format("config {} failed: {}", e.config, e.error);
    case Kind::crew_waits: return crew_wait_message(e.config, e.count, e.limit);
    case Kind::state_copied:
      return fmt::format("config {} took config {}'s state after epoch {}, now {}", e.config, e.decision->source,
                         e.decision->source_epoch, describe_params(e.decision->params));
    case Kind::state_copy_failed:
      return fmt::format("config {} failed: copying config {}'s state after epoch {} failed: {}", e.config,
                         e.decision->source, e.decision->source_epoch, e.error);
    case Kind::gang_failed:
      return fmt::format("gang {} of config {} ({} workers) failed, its units are pending again: ", e.attempt_id,
                         e.config, e.count);
    case Kind::pipeline_failed:
      return fmt::format("pipeline attempt {} of {} failed: ", e.attempt_id, to_string(e.unit));
  }
  return {};
}

}  // namespace

std::string event_line(const ControlEvents& events) {
  std::string line;
  for (const auto& e : events) line += words_of(e);
  return line;
}

const ControlEvent* find_event(const ControlEvents& events, ControlEvent::Kind kind) {
  for (const auto& e : events)
    if (e.kind == kind) return &e;
  return nullptr;
}

}  // namespace cerebro
