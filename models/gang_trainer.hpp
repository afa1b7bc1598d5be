#pragma once
// Data-parallel gangs (issue 14), the torch-free face: k ranks train one
// config at once, each on its own partition, as one attempt.
//
// Each rank passes over its own partition in a seeded random order with its
// share of the config's batch_size (batch_size / k, the first batch_size % k
// ranks one more), so a global step covers batch_size examples and the
// config's hyper-parameters mean what they mean under MOP. After every step
// the ranks sum their gradients (of the summed loss) and example counts in
// one c10d ProcessGroupGloo allreduce and divide: the gradient of the mean
// loss over the global batch, exactly. Every rank then takes the same
// optimizer step from the same state, so the parameters stay identical; a
// rank whose partition ran out contributes nothing to the remaining steps.
// At the end floating buffers (BatchNorm statistics) are averaged, and every
// rank holds the one resulting state.
//
// Rendezvous: rank 0 opens a c10d TCPStore (host()); the others join it with
// the port rank 0 reports (join()); the process group's Gloo sockets are
// bound to each rank's own address. Sockets live as long as the session.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "models/unit_trainer.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::models {

class GangSession {
 public:
  // Rank 0 of a gang of `size`: opens the rendezvous store on a free port of
  // `address` (this rank's cluster address; see port()).
  static Result<std::unique_ptr<GangSession>> host(const std::string& address, int size, double timeout_s);
  // Rank `rank` (1 .. size-1): joins the store rank 0 opened at
  // store_address:port; its Gloo sockets bind to own_address.
  static Result<std::unique_ptr<GangSession>> join(const std::string& store_address, int port,
                                                   const std::string& own_address, int rank, int size,
                                                   double timeout_s);
  ~GangSession();
  GangSession(const GangSession&) = delete;
  GangSession& operator=(const GangSession&) = delete;

  int rank() const;
  int size() const;
  int port() const;  // the store's port (rank 0's)

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit GangSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct GangUnitOutput {
  UnitOutput unit;              // the state every rank holds; train_loss and examples over the whole gang
  int64_t steps = 0;            // global steps (allreduces of gradients)
  double allreduce_s = 0;       // seconds spent in them, this rank
};

// Trains this rank's unit (input.partition, input.seed) in the gang. Every
// rank must call it with the same params and state. input.validation, if
// set, is evaluated on the result by this rank. An error on any rank (a peer
// gone, the timeout) fails the whole attempt: no rank returns a state then.
Result<GangUnitOutput> train_gang_unit(GangSession& session, const UnitInput& input);

// The allreduce cost of a config's gradients in this gang: the mean seconds of
// `repeats` allreduces of a buffer as large as its parameters (every rank
// calls it). What the gang planner's allreduce_s is measured with.
Result<double> measure_allreduce(GangSession& session, const nlohmann::json& params, const ShapeInfo& shape,
                                 int repeats);

}  // namespace cerebro::models
