#pragma once
// The CAF side of pipeline stages: the stage_tensor message
// (runtime/base/pipeline_messages.hpp), its atoms, the stage actor's typed
// interface and the registration. The actor is actors/pipeline_stage.hpp.

#include <caf/all.hpp>

#include "runtime/base/pipeline_messages.hpp"

namespace cerebro {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stage_tensor& x) {
  return f(caf::meta::type_name("stage_tensor"), x.micro_batch, x.integer, x.shape, x.data);
}

// CAF 0.17 atoms have at most 10 characters.
using stage_forward_atom = caf::atom_constant<caf::atom("stforward")>;
using stage_loss_atom = caf::atom_constant<caf::atom("stloss")>;
using stage_backward_atom = caf::atom_constant<caf::atom("stbackward")>;
using stage_step_atom = caf::atom_constant<caf::atom("ststep")>;
using stage_discard_atom = caf::atom_constant<caf::atom("stdiscard")>;
using stage_save_atom = caf::atom_constant<caf::atom("stsave")>;

// One pipeline stage of one config (detached: each message computes).
using pipeline_stage_actor = caf::typed_actor<
    // A micro-batch's input activation -> its output activation (every stage but the last).
    caf::replies_to<stage_forward_atom, stage_tensor>::with<stage_tensor>,
    // The last stage: (input activation, targets, the batch's examples) -> the micro-batch's summed loss.
    caf::replies_to<stage_loss_atom, stage_tensor, stage_tensor, int64_t>::with<double>,
    // The gradient of a micro-batch's output (the last stage: empty) -> the gradient of its input
    // (stage 0: empty). Gradients of the stage's parameters accumulate.
    caf::replies_to<stage_backward_atom, stage_tensor>::with<stage_tensor>,
    // The optimizer step over the accumulated gradients.
    caf::replies_to<stage_step_atom>::with<bool>,
    // Drop the micro-batches in flight and the gradients (a diverged batch).
    caf::replies_to<stage_discard_atom>::with<bool>,
    // The stage's state (parameters, buffers, optimizer state).
    caf::replies_to<stage_save_atom>::with<std::string>>;

// Adds stage_tensor to `config` (register_message_types calls it).
void register_pipeline_message_types(caf::actor_system_config& config);

}  // namespace cerebro
