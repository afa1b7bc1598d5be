#include "runtime/search_procedure.hpp"

namespace cerebro {

EpochDecision FixedEpochsProcedure::on_epoch_end(const EpochOutcome& /*outcome*/) {
  return EpochDecision::continue_training;
}

}  // namespace cerebro
