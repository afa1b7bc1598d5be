// Data-parallel gangs over c10d ProcessGroupGloo, two ranks on
// threads of this process talking over loopback TCP:
//  - exactness: a gang whose two ranks hold the same partition with the same
//    seed takes the steps of one unit at half the batch (each global step
//    averages two copies of the same half batch), so its parameters match
//    that unit's within 1e-5;
//  - the loss curve: a gang of 2 over partitions p0 and p1, the global batch
//    split, trains like one worker visiting p0 then p1 (MOP) on a small fixed
//    problem: per-epoch training loss within 15% (+0.05) and validation
//    accuracy within 0.1 over 4 epochs;
//  - every rank holds the same state bit for bit, whether a bucket's sum
//    goes by direct exchange or by Gloo's allreduce, with 2 or 3 ranks;
//  - failures and bad input are errors, never a state.
#include <boost/test/unit_test.hpp>

#include <sched.h>

#include <filesystem>
#include <future>
#include <thread>

#include "models/computing_threads.hpp"
#include "models/gang_trainer.hpp"
#include "test/models/test_models_state.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

using nlohmann::json;

struct RankInput {
  const datasets::Dataset* partition;
  uint64_t seed;
  const datasets::Dataset* validation = nullptr;
};

// Runs one gang attempt of two ranks on two threads; both results.
std::pair<Result<GangUnitOutput>, Result<GangUnitOutput>> run_gang(const json& params, const ShapeInfo& shape,
                                                                   const std::string& state, RankInput r0,
                                                                   RankInput r1) {
  auto host = GangSession::host("127.0.0.1", 2, 30);
  BOOST_TEST_REQUIRE(host.ok(), host.error());
  std::unique_ptr<GangSession> rank0 = std::move(host).value();
  int port = rank0->port();
  BOOST_TEST_REQUIRE(port > 0);
  auto input = [&](const RankInput& r) {
    UnitInput in;
    in.params = &params;
    in.shape = shape;
    in.state = &state;
    in.partition = r.partition;
    in.validation = r.validation;
    in.seed = r.seed;
    return in;
  };
  auto second = std::async(std::launch::async, [&]() -> Result<GangUnitOutput> {
    auto joined = GangSession::join("127.0.0.1", port, "127.0.0.1", 1, 2, 30);
    if (!joined.ok()) return joined.status();
    return train_gang_unit(**joined, input(r1));
  });
  Result<GangUnitOutput> first = train_gang_unit(*rank0, input(r0));
  return {std::move(first), second.get()};
}

double max_model_difference(const std::string& a, const std::string& b) {
  DecodedState da = decode_state(a), db = decode_state(b);
  double worst = 0;
  int64_t compared = 0;
  for (const auto& [key, tensor] : da.tensors) {
    if (key.rfind("model/", 0) != 0) continue;
    worst = std::max(worst, (tensor - db.tensors.at(key)).abs().max().item<double>());
    ++compared;
  }
  BOOST_TEST(compared > 0);
  return worst;
}

std::string must(const Result<std::string>& r) {
  BOOST_TEST_REQUIRE(r.ok(), r.error());
  return r.value();
}

// Two ranks over the same partition, each taking half of the batch, give the
// unit one process trains at half the batch: the same state (within 1e-5) and
// loss, held by both ranks.
void expect_gang_equals_half_batch_unit(const std::string& hidden, int64_t examples, uint64_t seed, int64_t steps) {
  Data data = make_data({20}, examples);
  json gang_params = json::parse(R"({"model": "mlp", "optimizer": "sgd", "lr": 0.05, "momentum": 0.9,
                                     "batch_size": 32})");
  gang_params["hidden"] = json::parse(hidden);
  json half_params = gang_params;
  half_params["batch_size"] = 16;
  std::string state = must(initial_state(gang_params, data.shape, data.p0, 7));
  auto [r0, r1] = run_gang(gang_params, data.shape, state, {&data.p0, seed}, {&data.p0, seed});
  BOOST_TEST_REQUIRE(r0.ok(), r0.error());
  BOOST_TEST_REQUIRE(r1.ok(), r1.error());
  BOOST_TEST(r0->steps == steps);  // the examples in shares of 16
  BOOST_TEST(r0->unit.examples == 2 * examples);
  Result<UnitOutput> alone = run_unit(half_params, data.shape, state, data.p0, seed);
  BOOST_TEST_REQUIRE(alone.ok(), alone.error());
  BOOST_TEST(max_model_difference(r0->unit.state, alone->state) < 1e-5);
  BOOST_TEST(r0->unit.train_loss == alone->train_loss, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(max_model_difference(r0->unit.state, r1->unit.state) == 0.0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gang_training)

BOOST_AUTO_TEST_CASE(two_copies_of_a_half_batch_are_one_unit_at_half_the_batch) {
  expect_gang_equals_half_batch_unit("[16]", 128, 11, 8);
}

// The same exactness where the exchange sends its bucket in several chunks
// (hidden [300, 300] on 20 features: 99,610 floats, two chunks of 65,536).
BOOST_AUTO_TEST_CASE(an_exchange_in_several_chunks_is_exact) {
  expect_gang_equals_half_batch_unit("[300, 300]", 96, 3, 6);
}

// The same exactness where the gradients are cut into buckets whose sums
// start during backward (hidden [1100, 1000, 1000] on 20 features: the last
// layers up to the second hidden one, 2.1M floats, make one bucket, summed by
// Gloo's allreduce; the first layer's 23k go by the exchange).
BOOST_AUTO_TEST_CASE(bucketed_sums_during_backward_are_exact) {
  expect_gang_equals_half_batch_unit("[1100, 1000, 1000]", 96, 5, 6);
}

// The same exactness where one bucket is too large for the direct exchange
// and goes by Gloo's allreduce (hidden [1100, 1000]: the middle layer's
// 1.1M floats), the other by the exchange.
BOOST_AUTO_TEST_CASE(a_bucket_too_large_for_the_exchange_is_allreduced_exactly) {
  expect_gang_equals_half_batch_unit("[1100, 1000]", 96, 5, 6);
}

// A gang of three over different partitions: every rank adds the others'
// gradients in rank order, so all three hold the same state bit for bit
// (adding in each rank's own order, b + a + c on rank 1 and c + a + b on
// rank 2, would round differently).
BOOST_AUTO_TEST_CASE(three_ranks_sum_in_one_order_and_hold_one_state) {
  Data data = make_data({20}, 96);
  datasets::Dataset third = synthetic({20}, 96, 4);
  json params = json::parse(R"({"model": "mlp", "hidden": [64, 32], "lr": 0.01, "batch_size": 24})");
  std::string state = must(initial_state(params, data.shape, data.p0, 3));
  auto gang = local_gang(3, 30);
  BOOST_TEST_REQUIRE(gang.ok(), gang.error());
  const datasets::Dataset* parts[] = {&data.p0, &data.p1, &third};
  std::vector<Result<GangUnitOutput>> out(3, Status::internal("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      UnitInput in;
      in.params = &params;
      in.shape = data.shape;
      in.state = &state;
      in.partition = parts[r];
      in.seed = static_cast<uint64_t>(r) + 1;
      out[r] = train_gang_unit(*(*gang)[r], in);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& o : out) BOOST_TEST_REQUIRE(o.ok(), o.error());
  BOOST_TEST(out[0]->steps == 12);  // 96 examples in shares of 8
  BOOST_TEST(max_model_difference(out[0]->unit.state, out[1]->unit.state) == 0.0);
  BOOST_TEST(max_model_difference(out[0]->unit.state, out[2]->unit.state) == 0.0);
  BOOST_TEST(max_model_difference(out[0]->unit.state, state) > 0.0);  // it trained
}

// A rank whose partition runs out runs no backward but still takes part in
// every bucket's sum (here two: hidden [1100, 1000]), in the same order as
// its peer: the gang ends with one state, every step counted, no hang.
BOOST_AUTO_TEST_CASE(a_rank_that_runs_out_still_matches_its_peers_buckets) {
  Data data = make_data({20}, 128);
  datasets::Dataset shorter = synthetic({20}, 40, 9);
  json params = json::parse(R"({"model": "mlp", "hidden": [1100, 1000], "lr": 0.001, "batch_size": 32})");
  std::string state = must(initial_state(params, data.shape, data.p0, 3));
  auto [r0, r1] = run_gang(params, data.shape, state, {&shorter, 1}, {&data.p0, 2});
  BOOST_TEST_REQUIRE(r0.ok(), r0.error());
  BOOST_TEST_REQUIRE(r1.ok(), r1.error());
  BOOST_TEST(r0->steps == 8);  // the longer partition's 128 examples in shares of 16
  BOOST_TEST(r0->unit.examples == 168);
  BOOST_TEST(r0->rank_examples == 40);
  BOOST_TEST(r1->rank_examples == 128);
  BOOST_TEST(max_model_difference(r0->unit.state, r1->unit.state) == 0.0);
}

BOOST_AUTO_TEST_CASE(a_gang_of_two_trains_like_one_worker_visiting_both_partitions) {
  Data data = make_data({20}, 256);
  json params = json::parse(R"({"model": "mlp", "hidden": [32], "batch_size": 32, "lr": 0.003})");
  std::string initial = must(initial_state(params, data.shape, data.p0, 3));
  std::string gang_state = initial, mop_state = initial;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    auto [r0, r1] =
        run_gang(params, data.shape, gang_state, {&data.p0, 100 + epoch, &data.validation}, {&data.p1, 200 + epoch});
    BOOST_TEST_REQUIRE(r0.ok(), r0.error());
    BOOST_TEST_REQUIRE(r1.ok(), r1.error());
    gang_state = r0->unit.state;
    Result<UnitOutput> first = run_unit(params, data.shape, mop_state, data.p0, 100 + epoch);
    BOOST_TEST_REQUIRE(first.ok(), first.error());
    Result<UnitOutput> second = run_unit(params, data.shape, first->state, data.p1, 200 + epoch, &data.validation);
    BOOST_TEST_REQUIRE(second.ok(), second.error());
    mop_state = second->state;
    double mop_loss = (first->train_loss * first->examples + second->train_loss * second->examples) /
                      static_cast<double>(first->examples + second->examples);
    BOOST_TEST_CONTEXT("epoch " << epoch << ": gang loss " << r0->unit.train_loss << ", MOP loss " << mop_loss) {
      BOOST_TEST(r0->unit.examples == first->examples + second->examples);
      BOOST_TEST(std::abs(r0->unit.train_loss - mop_loss) <= 0.15 * mop_loss + 0.05);
      BOOST_TEST_REQUIRE(r0->unit.validation.has_value());
      BOOST_TEST(std::abs(r0->unit.validation->accuracy - second->validation->accuracy) <= 0.1);
    }
  }
  // And it learnt: the last epoch's accuracy is well above chance (0.1).
  Result<Evaluation> final_gang = evaluate_state(params, data.shape, gang_state, data.validation);
  BOOST_TEST_REQUIRE(final_gang.ok(), final_gang.error());
  BOOST_TEST(final_gang->accuracy > 0.5);
}

// Given the validation set on both ranks, each evaluates half of it (201
// rows: 100 and 101) and rank 0 reports the evaluation of the whole set:
// what evaluating the gang's state on one worker gives.
BOOST_AUTO_TEST_CASE(both_ranks_validate_a_half_and_rank_0_reports_the_whole_set) {
  Data data = make_data({20}, 64);
  datasets::Dataset validation = synthetic({20}, 201, 5);
  json params = json::parse(R"({"model": "mlp", "hidden": [16], "batch_size": 16, "lr": 0.01})");
  std::string state = must(initial_state(params, data.shape, data.p0, 3));
  auto [r0, r1] = run_gang(params, data.shape, state, {&data.p0, 1, &validation}, {&data.p1, 2, &validation});
  BOOST_TEST_REQUIRE(r0.ok(), r0.error());
  BOOST_TEST_REQUIRE(r1.ok(), r1.error());
  BOOST_TEST_REQUIRE(r0->unit.validation.has_value());
  BOOST_TEST(!r1->unit.validation.has_value());
  BOOST_TEST(r1->unit.validate_s > 0.0);  // it did its half
  Result<Evaluation> whole = evaluate_state(params, data.shape, r0->unit.state, validation);
  BOOST_TEST_REQUIRE(whole.ok(), whole.error());
  const Evaluation& split = *r0->unit.validation;
  BOOST_TEST(split.examples == 201);
  BOOST_TEST(split.accuracy == whole->accuracy);
  BOOST_TEST(split.loss == whole->loss, boost::test_tools::tolerance(1e-5));
  BOOST_TEST_REQUIRE(split.metrics.size() == whole->metrics.size());
  for (const auto& [name, value] : whole->metrics) {
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(split.metrics.at(name) == value, boost::test_tools::tolerance(1e-5)); }
  }
}

// A structured task's gang trains on both ranks and its rank 0 reports the evaluation of the whole
// validation set, as one worker scores the gang's state: merged token counts for a language model,
// BLEU of greedy captions (rank 0 decodes them alone), mAP of the boxes of both halves.
BOOST_AUTO_TEST_CASE(a_structured_tasks_gang_validates_like_one_worker) {
  const json transformer = {
      {"model", "transformer"}, {"layers", 1}, {"d_model", 16}, {"heads", 2}, {"ff", 32}, {"lr", 0.01},
      {"batch_size", 16}};
  const json captioner = {{"model", "captioner"}, {"channels", {8}}, {"layers", 1}, {"d_model", 16},
                          {"heads", 2},           {"ff", 32},        {"lr", 0.01},  {"batch_size", 16}};
  const json detector = {{"model", "detector"}, {"channels", {8, 8}}, {"head", 8}, {"lr", 0.01}, {"batch_size", 16}};
  const std::vector<std::pair<json, Data>> cases = {
      {transformer, make_token_data(12, 48)}, {captioner, make_caption_data(48)}, {detector, make_box_data(48)}};
  for (const auto& [params, data] : cases) {
    BOOST_TEST_CONTEXT(params["model"]) {
      std::string state = must(initial_state(params, data.shape, data.p0, 3));
      auto [r0, r1] =
          run_gang(params, data.shape, state, {&data.p0, 1, &data.validation}, {&data.p1, 2, &data.validation});
      BOOST_TEST_REQUIRE(r0.ok(), r0.error());
      BOOST_TEST_REQUIRE(r1.ok(), r1.error());
      BOOST_TEST_REQUIRE(r0->unit.validation.has_value());
      BOOST_TEST(!r1->unit.validation.has_value());
      Result<Evaluation> whole = evaluate_state(params, data.shape, r0->unit.state, data.validation);
      BOOST_TEST_REQUIRE(whole.ok(), whole.error());
      // These losses are each batch's mean over its tokens or objects, weighted by the batch's examples:
      // the ranks' halves are other batches than the whole set's, so the loss agrees closely, not exactly.
      BOOST_TEST(r0->unit.validation->loss == whole->loss, boost::test_tools::tolerance(1e-2));
      BOOST_TEST_REQUIRE(!whole->metrics.empty());
      for (const auto& [name, value] : whole->metrics) {
        BOOST_TEST_CONTEXT(name) {
          BOOST_TEST(r0->unit.validation->metrics.at(name) == value, boost::test_tools::tolerance(1e-5));
        }
      }
    }
  }
}

// Gloo's event-loop thread, one per rank, runs at SCHED_IDLE so that it never
// preempts a training thread (idle_priority_device); the ranks' own threads
// keep their policy.
BOOST_AUTO_TEST_CASE(the_gangs_socket_threads_run_at_idle_priority) {
  auto idle_threads = [] {
    int idle = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      int policy = sched_getscheduler(static_cast<pid_t>(std::stol(task.path().filename().string())));
      if (policy >= 0 && (policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLE) ++idle;
    }
    return idle;
  };
  const int before = idle_threads();
  Data data = make_data({20}, 32);
  json params = json::parse(R"({"model": "mlp", "hidden": [8], "batch_size": 16})");
  auto gang = local_gang(2, 30);
  BOOST_TEST_REQUIRE(gang.ok(), gang.error());
  auto second = std::async(std::launch::async, [&] { return measure_allreduce(*(*gang)[1], params, data.shape, 2); });
  Result<double> first = measure_allreduce(*(*gang)[0], params, data.shape, 2);  // forms both process groups
  Result<double> other = second.get();
  BOOST_TEST_REQUIRE(first.ok(), first.error());
  BOOST_TEST_REQUIRE(other.ok(), other.error());
  BOOST_TEST(idle_threads() - before == 2);
  BOOST_TEST(sched_getscheduler(0) == SCHED_OTHER);
}

// A rank waiting for its peers spins only while this process's computing
// threads fit its cores. (On a machine of 2 cores the two-rank tests above
// sum spinning, the three-rank one asleep: both exact.)
BOOST_AUTO_TEST_CASE(a_waiting_rank_spins_only_while_the_computing_threads_fit_the_cores) {
  cpu_set_t usable;
  BOOST_TEST_REQUIRE(sched_getaffinity(0, sizeof(usable), &usable) == 0);
  const int cores = CPU_COUNT(&usable);
  BOOST_TEST_REQUIRE(ComputingThread::count() == 0);
  BOOST_TEST(waiting_may_spin());
  std::vector<std::unique_ptr<ComputingThread>> computing;
  for (int i = 0; i < cores; ++i) computing.push_back(std::make_unique<ComputingThread>());
  BOOST_TEST(ComputingThread::count() == cores);
  BOOST_TEST(waiting_may_spin());
  computing.push_back(std::make_unique<ComputingThread>());
  BOOST_TEST(!waiting_may_spin());
  computing.clear();
  BOOST_TEST(waiting_may_spin());

  // A gang's ranks count while they train, and no longer after, also when
  // the attempt fails.
  Data data = make_data({20}, 32);
  json params = json::parse(R"({"model": "mlp", "hidden": [8], "batch_size": 16})");
  std::string state = must(initial_state(params, data.shape, data.p0, 1));
  auto [r0, r1] = run_gang(params, data.shape, state, {&data.p0, 1}, {&data.p1, 2});
  BOOST_TEST_REQUIRE(r0.ok(), r0.error());
  BOOST_TEST(ComputingThread::count() == 0);
  json too_small = params;
  too_small["batch_size"] = 1;
  auto [f0, f1] = run_gang(too_small, data.shape, state, {&data.p0, 1}, {&data.p1, 2});
  BOOST_TEST(!f0.ok());
  BOOST_TEST(ComputingThread::count() == 0);
}

BOOST_AUTO_TEST_CASE(batchnorm_statistics_are_one_state) {
  Data data = make_data({1, 8, 8}, 64);
  json params = json::parse(R"({"model": "resnet", "width": 4, "blocks": [1], "batch_size": 16})");
  std::string state = must(initial_state(params, data.shape, data.p0, 5));
  auto [r0, r1] = run_gang(params, data.shape, state, {&data.p0, 1}, {&data.p1, 2});
  BOOST_TEST_REQUIRE(r0.ok(), r0.error());
  BOOST_TEST_REQUIRE(r1.ok(), r1.error());
  BOOST_TEST(max_model_difference(r0->unit.state, r1->unit.state) == 0.0);
}

BOOST_AUTO_TEST_CASE(bad_gangs_are_errors_naming_why) {
  Data data = make_data({20}, 32);
  json params = json::parse(R"({"model": "mlp", "hidden": [8], "batch_size": 1})");
  std::string state = must(initial_state(params, data.shape, data.p0, 1));
  auto [r0, r1] = run_gang(params, data.shape, state, {&data.p0, 1}, {&data.p1, 2});
  BOOST_TEST_REQUIRE(!r0.ok());
  BOOST_TEST(r0.error().find("batch_size 1 is smaller than the gang's 2 ranks") != std::string::npos, r0.error());
  BOOST_TEST(!r1.ok());
  BOOST_TEST(!GangSession::host("127.0.0.1", 1, 5).ok());
  auto rank = GangSession::join("127.0.0.1", 1234, "127.0.0.1", 2, 2, 5);
  BOOST_TEST_REQUIRE(!rank.ok());
  BOOST_TEST(rank.error().find("rank 2 outside 1..1") != std::string::npos, rank.error());
}

BOOST_AUTO_TEST_CASE(a_peer_that_leaves_fails_the_attempt_without_a_state) {
  Data data = make_data({20}, 64);
  json params = json::parse(R"({"model": "mlp", "hidden": [8], "batch_size": 16})");
  std::string state = must(initial_state(params, data.shape, data.p0, 1));
  auto host = GangSession::host("127.0.0.1", 2, 3);
  BOOST_TEST_REQUIRE(host.ok(), host.error());
  std::unique_ptr<GangSession> rank0 = std::move(host).value();
  // Rank 1 joins the store and leaves before training: rank 0 waits for it
  // at most the timeout, then fails.
  {
    auto joined = GangSession::join("127.0.0.1", rank0->port(), "127.0.0.1", 1, 2, 3);
    BOOST_TEST_REQUIRE(joined.ok(), joined.error());
  }
  UnitInput in;
  in.params = &params;
  in.shape = data.shape;
  in.state = &state;
  in.partition = &data.p0;
  in.seed = 1;
  Result<GangUnitOutput> out = train_gang_unit(*rank0, in);
  BOOST_TEST_REQUIRE(!out.ok());
  BOOST_TEST(out.error().find("gang training failed (rank 0 of 2)") != std::string::npos, out.error());
}

BOOST_AUTO_TEST_CASE(the_allreduce_probe_measures_a_configs_gradients) {
  Data data = make_data({20}, 16);
  json params = json::parse(R"({"model": "mlp", "hidden": [64], "batch_size": 16})");
  auto host = GangSession::host("127.0.0.1", 2, 30);
  BOOST_TEST_REQUIRE(host.ok(), host.error());
  std::unique_ptr<GangSession> rank0 = std::move(host).value();
  int port = rank0->port();
  auto other = std::async(std::launch::async, [&]() -> Result<double> {
    auto joined = GangSession::join("127.0.0.1", port, "127.0.0.1", 1, 2, 30);
    if (!joined.ok()) return joined.status();
    return measure_allreduce(**joined, params, data.shape, 5);
  });
  Result<double> seconds = measure_allreduce(*rank0, params, data.shape, 5);
  BOOST_TEST_REQUIRE(seconds.ok(), seconds.error());
  BOOST_TEST(other.get().ok());
  BOOST_TEST(*seconds > 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
