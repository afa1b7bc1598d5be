#pragma once
// SearchProcedure: the AutoML hook called at each config's epoch boundary. The
// scheduler reports the epoch's losses and applies the decision to the MopBook
// (continue -> MopBook::advance, stop -> MopBook::stop). Procedures that add
// configs (Hyperband, PBT) do so through the scheduler, not through this hook.

#include <cstdint>

#include "runtime/ids.hpp"

namespace cerebro {

struct EpochOutcome {
  ConfigId config = 0;
  int32_t epoch = 0;
  double train_loss = 0;
  double val_loss = 0;
  double val_accuracy = 0;
};

enum class EpochDecision { continue_training, stop };

class SearchProcedure {
 public:
  virtual ~SearchProcedure() = default;
  virtual EpochDecision on_epoch_end(const EpochOutcome& outcome) = 0;
};

// Grid and random search train every config for its planned epochs: always
// continue (MopBook finishes the config after its last planned epoch).
class FixedEpochsProcedure : public SearchProcedure {
 public:
  EpochDecision on_epoch_end(const EpochOutcome& outcome) override;
};

}  // namespace cerebro
