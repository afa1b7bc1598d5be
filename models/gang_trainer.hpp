#pragma once
// Data-parallel gangs, the torch-free face: k ranks train one
// config at once, each on its own partition, as one attempt.
//
// Each rank passes over its own partition in a seeded random order with its
// share of the config's batch_size (batch_size / k, the first batch_size % k
// ranks one more), so a global step covers batch_size examples and the
// config's hyper-parameters mean what they mean under MOP. At every step
// the ranks sum their gradients (of the summed loss) and example counts over
// c10d ProcessGroupGloo and divide: the gradient of the mean loss over the
// global batch, exactly. The gradients live in one flat buffer cut into
// buckets, whose sums start during backward as each bucket fills (as DDP
// does); GangUnitOutput::allreduce_s is what they cost beyond it. A bucket
// whose floats times (ranks - 1) stay within a million is summed by direct
// exchange (every rank sends it to every other over Gloo pairs of its own
// and adds in rank order; it runs when the step waits for it), a larger one
// by the group's allreduce (gang_trainer.cpp, GangSum, says why and what each costs).
// Every rank then takes the same optimizer step from the same state, so the
// parameters stay identical bit for bit; a
// rank whose partition ran out contributes nothing to the remaining steps.
// At the end floating buffers (BatchNorm statistics) are averaged, and every
// rank holds the one resulting state.
//
// Rendezvous, in runs: open() with a RendezvousCall, a c10d store whose
// operations are messages to the scheduler side's board (the worker passes
// a call that sends them over the cluster's channel), so no rendezvous port
// is opened at all. The process group's Gloo sockets are bound to each
// rank's own cluster address and live as long as the session.
// host()/join() (a c10d TCPStore, whose server binds every interface) are
// kept for `cerebro allreduce-probe --rank`'s local measurements only (its
// ranks as threads meet through local_gang, with no store port).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/unit_trainer.hpp"
#include "runtime/base/rendezvous.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::models {

// One rendezvous operation, answered by the gang's board (the worker's
// implementation blocks on a CAF request). An error fails the rendezvous.
using RendezvousCall = std::function<Result<rendezvous_reply>(const rendezvous_request&)>;

class GangSession {
 public:
  // Rank `rank` of a gang of `size` attempt `gang` meeting through `call`
  // (no socket is opened for the rendezvous); its Gloo sockets bind to
  // own_address. A rank waits at most timeout_s for its peers, at the
  // rendezvous and at every collective.
  static Result<std::unique_ptr<GangSession>> open(RendezvousCall call, int64_t gang, const std::string& own_address,
                                                   int rank, int size, double timeout_s);
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
  int port() const;  // the TCPStore's port (rank 0's; 0 for open())

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit GangSession(std::unique_ptr<Impl> impl);
  friend Result<std::vector<std::unique_ptr<GangSession>>> local_gang(int ranks, double timeout_s,
                                                                      const std::string& address);
  std::unique_ptr<Impl> impl_;
};

struct GangUnitOutput {
  UnitOutput unit;            // the state every rank holds; train_loss and examples over the whole gang
  int64_t steps = 0;          // global steps (allreduces of gradients)
  int64_t rank_examples = 0;  // the examples of this rank's own partition it trained on
  double allreduce_s = 0;     // seconds this rank waited for them after its backward (the cost not hidden)
};

// Trains this rank's unit (input.partition, input.seed) in the gang. Every
// rank must call it with the same params and state. If every rank is given
// input.validation, the ranks evaluate a k-th of it each and rank 0 returns
// the evaluation of the whole set (the others none); if only some are, each
// of those evaluates it whole. An error on any rank (a peer
// gone, the timeout) fails the whole attempt: no rank returns a state then.
Result<GangUnitOutput> train_gang_unit(GangSession& session, const UnitInput& input);

// The allreduce cost of a config's gradients in this gang: the mean seconds of
// `repeats` allreduces of a buffer as large as its parameters (every rank
// calls it). What the gang planner's allreduce_s is measured with.
Result<double> measure_allreduce(GangSession& session, const nlohmann::json& params, const ShapeInfo& shape,
                                 int repeats);

// The `ranks` sessions of one gang whose ranks are threads of this process,
// meeting through an in-memory c10d HashStore (no rendezvous port), Gloo's
// pairs bound to `address`: for measurements (measure_allreduce_local,
// `cerebro allreduce-probe`). Each session is then driven by its own thread.
Result<std::vector<std::unique_ptr<GangSession>>> local_gang(int ranks, double timeout_s,
                                                             const std::string& address = "127.0.0.1");

// The same figure for `ranks` threads of this process meeting through an
// in-memory c10d HashStore, Gloo over loopback: what a run's setup measures
// before parallelism = "auto" may form a gang (a gang's own measurement
// replaces it). Opens no port but the Gloo pairs on 127.0.0.1, for the call.
Result<double> measure_allreduce_local(const nlohmann::json& params, const ShapeInfo& shape, int ranks, int repeats);

// Whether a gang rank waiting for its peers' gradients may spin on its core
// rather than sleep in the socket's read: while this process's computing
// threads (models/computing_threads.hpp) fit the cores it may use. Spinning
// saves the wake-up, but where threads outnumber cores a spinning rank keeps
// a peer off the core it needs to send: 3 ranks on 2 vCPUs took 17 ms a sum
// spinning, 1.2 ms asleep. Threads of other processes are not counted
// (/proc/loadavg's running count, tried, read above the cores a fifth of
// the time on an idle machine, and every sleep cost the wake-up); several
// agents on one machine with more ranks than cores spin against each other.
bool waiting_may_spin();

}  // namespace cerebro::models
