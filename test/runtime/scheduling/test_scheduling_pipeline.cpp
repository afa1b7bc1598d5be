// Pipeline stages for big models, the plain part: the training
// memory estimate, the balanced split of a chain, the decision whether (and
// into how many stages) a config is split, micro-batch ranges, and the
// framing of the stages' states as a config's one state.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <numeric>
#include <limits>
#include <random>

#include "runtime/scheduling/pipeline_dispatch.hpp"
#include "runtime/scheduling/pipeline_plan.hpp"
#include "runtime/base/status.hpp"
#include "runtime/store/pipeline_state.hpp"
#include "test/support/contract_check.hpp"

namespace cerebro {
namespace {

constexpr int64_t kMb = int64_t{1} << 20;

// A chain whose links weigh `mb` megabytes each.
ModelChain chain_of(const std::vector<int64_t>& mb) {
  ModelChain c;
  for (size_t i = 0; i < mb.size(); ++i) {
    c.link_names.push_back("l" + std::to_string(i));
    c.link_bytes.push_back(mb[i] * kMb);
  }
  return c;
}

// The largest stage sum of a split (first index per stage).
int64_t largest_stage(const std::vector<int64_t>& w, const std::vector<size_t>& first) {
  int64_t best = 0;
  for (size_t s = 0; s < first.size(); ++s) {
    size_t end = s + 1 < first.size() ? first[s + 1] : w.size();
    best = std::max(best, std::accumulate(w.begin() + first[s], w.begin() + end, int64_t{0}));
  }
  return best;
}

// The smallest largest-stage sum over every split, by brute force.
int64_t brute_force_best(const std::vector<int64_t>& w, int stages) {
  const size_t n = w.size();
  int64_t best = std::numeric_limits<int64_t>::max();
  // Every choice of stages - 1 cut points among n - 1 gaps.
  for (uint32_t mask = 0; mask < (1u << (n - 1)); ++mask) {
    if (__builtin_popcount(mask) != stages - 1) continue;
    std::vector<size_t> first{0};
    for (size_t g = 0; g + 1 < n; ++g)
      if (mask & (1u << g)) first.push_back(g + 1);
    best = std::min(best, largest_stage(w, first));
  }
  return best;
}

BOOST_AUTO_TEST_SUITE(pipeline_plan)

BOOST_AUTO_TEST_CASE(training_memory_counts_parameters_gradients_buffers_and_optimizer_slots) {
  auto adam = training_memory(1000, 10, 2);
  BOOST_TEST(adam.parameter_bytes == 4000);
  BOOST_TEST(adam.gradient_bytes == 4000);
  BOOST_TEST(adam.buffer_bytes == 40);
  BOOST_TEST(adam.optimizer_bytes == 8000);
  BOOST_TEST(adam.total() == 16040);
  BOOST_TEST(training_memory(1000, 0, 0).total() == 8000);   // plain SGD
  BOOST_TEST(training_memory(1000, 0, 1).total() == 12000);  // SGD with momentum
}

BOOST_AUTO_TEST_CASE(balanced_split_minimises_the_largest_stage) {
  auto first = balanced_split({1, 1, 1, 1}, 2);
  BOOST_TEST_REQUIRE(first.ok());
  BOOST_TEST((*first == std::vector<size_t>{0, 2}));
  // A heavy middle link stands alone.
  first = balanced_split({1, 10, 1, 1}, 3);
  BOOST_TEST_REQUIRE(first.ok());
  BOOST_TEST(largest_stage({1, 10, 1, 1}, *first) == 10);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> w(2 + rng() % 9);
    for (auto& x : w) x = 1 + rng() % 100;
    int stages = 1 + static_cast<int>(rng() % w.size());
    auto split = balanced_split(w, stages);
    BOOST_TEST_REQUIRE(split.ok());
    BOOST_TEST_REQUIRE(split->size() == static_cast<size_t>(stages));
    BOOST_TEST(split->front() == 0u);
    for (size_t s = 1; s < split->size(); ++s) BOOST_TEST((*split)[s] > (*split)[s - 1]);  // non-empty stages
    BOOST_TEST(largest_stage(w, *split) == brute_force_best(w, stages));
  }
  BOOST_TEST((balanced_split({1, 2}, 3).code() == StatusCode::invalid_argument));
  BOOST_TEST((balanced_split({1, 2}, 0).code() == StatusCode::invalid_argument));
}

BOOST_AUTO_TEST_CASE(a_model_that_fits_is_never_split_unless_asked) {
  auto plan = plan_pipeline(chain_of({10, 10, 10}), {}, {4, 64 * kMb});
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST(plan->stages == 1);
  plan = plan_pipeline(chain_of({10, 10, 10}), {}, {4, 0});  // no budget
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST(plan->stages == 1);
}

BOOST_AUTO_TEST_CASE(a_model_over_the_budget_gets_the_fewest_stages_that_fit) {
  // 60 MB over 6 links of 10 MB; 25 MB per worker: 2 stages of 30 do not fit, 3 of 20 do.
  auto plan = plan_pipeline(chain_of({10, 10, 10, 10, 10, 10}), {}, {8, 25 * kMb});
  BOOST_TEST_REQUIRE(plan.ok(), plan.error());
  BOOST_TEST(plan->stages == 3);
  BOOST_TEST((plan->first_link == std::vector<size_t>{0, 2, 4}));
  BOOST_TEST((plan->stage_bytes == std::vector<int64_t>{20 * kMb, 20 * kMb, 20 * kMb}));
  BOOST_TEST(plan->total_bytes == 60 * kMb);
  BOOST_TEST(plan->reason.find("exceeds [cluster] model_memory_mb") != std::string::npos, plan->reason);
}

BOOST_AUTO_TEST_CASE(a_forced_pipeline_takes_the_stages_asked_for) {
  auto plan = plan_pipeline(chain_of({1, 1, 1, 1}), {true, 0}, {4, 0});
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST(plan->stages == 2);
  plan = plan_pipeline(chain_of({1, 1, 1, 1}), {true, 4}, {4, 0});
  BOOST_TEST_REQUIRE(plan.ok());
  BOOST_TEST(plan->stages == 4);
}

BOOST_AUTO_TEST_CASE(refusals_name_the_key_and_the_reason) {
  // More stages than workers.
  auto plan = plan_pipeline(chain_of({1, 1, 1, 1}), {true, 3}, {2, 0});
  BOOST_TEST((plan.code() == StatusCode::invalid_argument));
  BOOST_TEST(plan.error() == "[space] stages = 3: more stages than the 2 workers");
  // Fewer top-level children than stages.
  plan = plan_pipeline(chain_of({1, 1}), {true, 3}, {4, 0});
  BOOST_TEST(plan.error() ==
             "[space] stages = 3: the model has only 2 top-level children (l0, l1), fewer than the stages");
  // A model that is no chain.
  ModelChain opaque = chain_of({100});
  opaque.not_a_chain = "its forward adds a skip connection";
  plan = plan_pipeline(opaque, {true, 0}, {4, 0});
  BOOST_TEST(plan.error() ==
             "[space] parallelism = \"pipeline\": the model cannot be split into pipeline stages: its "
             "forward adds a skip connection");
  // Over the budget and no chain: the budget is named as the cause.
  plan = plan_pipeline(opaque, {}, {4, 10 * kMb});
  BOOST_TEST(
      plan.error().find("exceeds [cluster] model_memory_mb (10.0 MB): the model cannot be split") != std::string::npos,
      plan.error());
  // One child cannot make a pipeline.
  plan = plan_pipeline(chain_of({1}), {true, 0}, {4, 0});
  BOOST_TEST(plan.error() ==
             "[space] parallelism = \"pipeline\": the model has 1 top-level child, a pipeline needs 2 or more");
  // One worker cannot host a pipeline.
  plan = plan_pipeline(chain_of({1, 1}), {true, 0}, {1, 0});
  BOOST_TEST(plan.error() == "[space] parallelism = \"pipeline\": a pipeline needs 2 or more workers, there is 1");
  // Does not fit even over every worker.
  plan = plan_pipeline(chain_of({30, 30, 30}), {}, {2, 40 * kMb});
  BOOST_TEST(
      plan.error().find("[cluster] model_memory_mb: the model's training state (90.0 MB) does not fit 40.0 MB per "
                        "worker even over 2 stages") == 0,
      plan.error());
  // A forced split whose stages do not fit the budget.
  plan = plan_pipeline(chain_of({30, 30, 30}), {true, 2}, {4, 40 * kMb});
  BOOST_TEST(plan.error().find("[cluster] model_memory_mb") == 0, plan.error());
  // stages without parallelism = "pipeline".
  plan = plan_pipeline(chain_of({1, 1}), {false, 2}, {4, 0});
  BOOST_TEST(plan.error().find("[space] stages = 2 applies to parallelism = \"pipeline\" only") == 0, plan.error());
}

BOOST_AUTO_TEST_CASE(micro_batches_cover_the_batch_without_empty_ones) {
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  BOOST_TEST((micro_batch_ranges(10, 4) == Ranges{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));
  BOOST_TEST((micro_batch_ranges(3, 4) == Ranges{{0, 1}, {1, 2}, {2, 3}}));
  BOOST_TEST((micro_batch_ranges(8, 1) == Ranges{{0, 8}}));
}

BOOST_AUTO_TEST_CASE(stage_states_frame_into_one_state_and_back) {
  std::vector<std::string> stages = {"stage zero", std::string("\0\1\2", 3), ""};
  auto packed = pack_stage_states(stages);
  BOOST_TEST(is_pipeline_state(packed));
  auto back = unpack_stage_states(packed);
  BOOST_TEST_REQUIRE(back.ok(), back.error());
  BOOST_TEST((*back == stages));
  // A whole model's state is not a pipeline's.
  BOOST_TEST(!is_pipeline_state("PK\3\4 a torch archive"));
  BOOST_TEST((unpack_stage_states("PK\3\4").code() == StatusCode::invalid_argument));
  // Truncated or with trailing bytes: corrupt.
  BOOST_TEST((unpack_stage_states(packed.substr(0, packed.size() - 1)).code() == StatusCode::corruption));
  BOOST_TEST((unpack_stage_states(packed + "x").code() == StatusCode::corruption));
  BOOST_TEST((unpack_stage_states(pack_stage_states({})).code() == StatusCode::corruption));
}

// Dispatching a pipeline unit: its crew and the attempts that run.

BOOST_AUTO_TEST_CASE(a_pipeline_crew_is_driven_by_a_worker_holding_the_partition) {
  // Workers 5 and 7 hold partition 1; 2, 3 and 9 do not.
  auto holds = [](WorkerId w, PartitionId p) { return p == 1 && (w == 5 || w == 7); };
  // Worker 3 could start 4 units under MOP, the others 1 or 0.
  auto runnable = [](WorkerId w) -> int64_t { return w == 3 ? 4 : (w == 9 ? 0 : 1); };
  const Unit unit{4, 1, 2};
  auto crew = choose_pipeline_crew(unit, 3, {2, 3, 5, 9, 7}, holds, runnable);
  BOOST_TEST_REQUIRE(crew.has_value());
  BOOST_TEST((crew->unit == unit));
  BOOST_TEST(crew->driver == 5);  // the first idle holder, in the schedule's order
  // Hosts: fewest runnable units first (9: 0), ties in idle order (2 before 7), never the busy-for-MOP 3.
  BOOST_TEST((crew->hosts == std::vector<WorkerId>{9, 2}));
  BOOST_TEST(crew->stages() == 3);
  BOOST_TEST((crew->members() == std::vector<WorkerId>{5, 9, 2}));
  BOOST_TEST(pipeline_label(*crew) == "pipeline over 3 stages (workers 5, 9, 2)");

  // Too few idle workers, or no idle holder of the partition: no crew.
  BOOST_TEST(!choose_pipeline_crew(unit, 3, {5, 9}, holds, runnable).has_value());
  BOOST_TEST(!choose_pipeline_crew(unit, 2, {2, 3, 9}, holds, runnable).has_value());
  BOOST_TEST(!choose_pipeline_crew(unit, 1, {5, 9}, holds, runnable).has_value());
  // Two stages: the driver and the least useful other worker.
  auto pair = choose_pipeline_crew(unit, 2, {7, 3, 5}, holds, runnable);
  BOOST_TEST_REQUIRE(pair.has_value());
  BOOST_TEST(pair->driver == 7);
  BOOST_TEST((pair->hosts == std::vector<WorkerId>{5}));
}

BOOST_AUTO_TEST_CASE(pipeline_attempts_hold_their_workers_until_they_finish) {
  PipelineAttempts attempts;
  PipelineCrew a{Unit{1, 0, 0}, 0, {1}};
  PipelineCrew b{Unit{2, 1, 0}, 2, {3, 4}};
  const int64_t first = attempts.start(a);
  const int64_t second = attempts.start(b);
  BOOST_TEST(first != second);
  BOOST_TEST(attempts.size() == 2u);
  BOOST_TEST(attempts.attempt_of(1).value() == first);
  BOOST_TEST(attempts.attempt_of(4).value() == second);
  BOOST_TEST(!attempts.attempt_of(5).has_value());
  BOOST_TEST((attempts.crew(second).unit == Unit{2, 1, 0}));

  // A worker in a running attempt cannot join another; a crew needs 2 distinct workers.
  CEREBRO_CHECK_CONTRACT(attempts.start(PipelineCrew{Unit{3, 0, 0}, 5, {4}}),
                         "PipelineAttempts::start: worker 4 is in pipeline attempt");
  CEREBRO_CHECK_CONTRACT(attempts.start(PipelineCrew{Unit{3, 0, 0}, 5, {}}), "needs at least 2 stages, got 1");
  CEREBRO_CHECK_CONTRACT(attempts.start(PipelineCrew{Unit{3, 0, 0}, 5, {6, 5}}), "worker 5 appears twice");
  BOOST_TEST(!attempts.attempt_of(5).has_value());  // a refused crew holds nobody

  // A failed (or committed) attempt frees every member at once and hands back its unit.
  PipelineCrew ended = attempts.finish(second);
  BOOST_TEST((ended.unit == Unit{2, 1, 0}));
  BOOST_TEST((ended.members() == std::vector<WorkerId>{2, 3, 4}));
  BOOST_TEST(!attempts.running(second));
  for (WorkerId w : {2, 3, 4}) BOOST_TEST(!attempts.attempt_of(w).has_value());
  CEREBRO_CHECK_CONTRACT(attempts.finish(second), "PipelineAttempts::finish: pipeline attempt 2 is not running");
  CEREBRO_CHECK_CONTRACT(attempts.crew(second), "PipelineAttempts::crew: pipeline attempt 2 is not running");
  // Freed workers can form the next attempt.
  BOOST_TEST(attempts.start(PipelineCrew{Unit{2, 1, 0}, 3, {4}}) > second);
  BOOST_TEST(attempts.running(first));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace cerebro
