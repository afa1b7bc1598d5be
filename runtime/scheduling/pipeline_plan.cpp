#include "runtime/scheduling/pipeline_plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace cerebro {

namespace {

std::string megabytes(int64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20)); }

// The stages' byte sums of a split.
std::vector<int64_t> stage_sums(const std::vector<int64_t>& weights, const std::vector<size_t>& first) {
  std::vector<int64_t> sums;
  for (size_t s = 0; s < first.size(); ++s) {
    size_t end = s + 1 < first.size() ? first[s + 1] : weights.size();
    sums.push_back(std::accumulate(weights.begin() + static_cast<std::ptrdiff_t>(first[s]),
                                   weights.begin() + static_cast<std::ptrdiff_t>(end), int64_t{0}));
  }
  return sums;
}

PipelinePlan make_plan(const ModelChain& chain, std::vector<size_t> first, std::string reason) {
  PipelinePlan plan;
  plan.stages = static_cast<int>(first.size());
  plan.stage_bytes = stage_sums(chain.link_bytes, first);
  plan.first_link = std::move(first);
  plan.total_bytes = chain.total_bytes();
  plan.reason = std::move(reason);
  return plan;
}

}  // namespace

TrainingMemory training_memory(int64_t parameters, int64_t buffer_elements, int optimizer_tensors_per_parameter) {
  TrainingMemory m;
  m.parameter_bytes = parameters * kBytesPerElement;
  m.gradient_bytes = parameters * kBytesPerElement;
  m.buffer_bytes = buffer_elements * kBytesPerElement;
  m.optimizer_bytes = parameters * kBytesPerElement * std::max(0, optimizer_tensors_per_parameter);
  return m;
}

int64_t ModelChain::total_bytes() const { return std::accumulate(link_bytes.begin(), link_bytes.end(), int64_t{0}); }

Result<std::vector<size_t>> balanced_split(const std::vector<int64_t>& weights, int stages) {
  const size_t n = weights.size();
  if (stages < 1 || static_cast<size_t>(stages) > n)
    return Status::invalid_argument(fmt::format("cannot split {} links into {} non-empty stages", n, stages));
  const auto k = static_cast<size_t>(stages);
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[i];
  // best[s][i]: the smallest largest-stage sum splitting links [0, i) into s stages;
  // cut[s][i]: where the last of those stages starts. n and k are small (a model's children).
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<std::vector<int64_t>> best(k + 1, std::vector<int64_t>(n + 1, kNone));
  std::vector<std::vector<size_t>> cut(k + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t s = 1; s <= k; ++s) {
    for (size_t i = s; i <= n; ++i) {
      for (size_t j = s - 1; j < i; ++j) {
        if (best[s - 1][j] == kNone) continue;
        int64_t largest = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        // Ties go to the later cut: earlier stages take more links, which keeps the split stable.
        if (largest <= best[s][i]) {
          best[s][i] = largest;
          cut[s][i] = j;
        }
      }
    }
  }
  std::vector<size_t> first(k);
  size_t end = n;
  for (size_t s = k; s >= 1; --s) {
    first[s - 1] = cut[s][end];
    end = cut[s][end];
  }
  return first;
}

Result<PipelinePlan> plan_pipeline(const ModelChain& chain, const PipelineRequest& request,
                                   const PipelineLimits& limits) {
  const int64_t total = chain.total_bytes();
  const bool over_budget = limits.budget_bytes > 0 && total > limits.budget_bytes;
  if (!request.forced && request.stages != 0)
    return Status::invalid_argument(fmt::format(
        "[space] stages = {} applies to parallelism = \"pipeline\" only (without it a config is split only when "
        "it does not fit [cluster] model_memory_mb)",
        request.stages));
  if (!request.forced && !over_budget) {
    auto plan = make_plan(chain, {0},
                          limits.budget_bytes > 0 ? fmt::format("its training state ({}) fits the worker's memory ({})",
                                                                megabytes(total), megabytes(limits.budget_bytes))
                                                  : "no memory budget and no pipeline asked for");
    return plan;
  }
  const std::string why = request.forced ? std::string("[space] parallelism = \"pipeline\"")
                                         : fmt::format("its training state ({}) exceeds [cluster] model_memory_mb ({})",
                                                       megabytes(total), megabytes(limits.budget_bytes));
  if (!chain.not_a_chain.empty())
    return Status::invalid_argument(
        fmt::format("{}: the model cannot be split into pipeline stages: {}", why, chain.not_a_chain));
  const int links = static_cast<int>(chain.link_bytes.size());
  if (request.forced && request.stages < 0)
    return Status::invalid_argument(fmt::format("[space] stages must be >= 2, got {}", request.stages));
  if (request.stages == 1)
    return Status::invalid_argument("[space] stages = 1 is no pipeline: give 2 or more, or drop parallelism");
  if (request.stages > links)
    return Status::invalid_argument(
        fmt::format("[space] stages = {}: the model has only {} top-level children ({}), fewer than the stages",
                    request.stages, links, fmt::join(chain.link_names, ", ")));
  if (request.stages > limits.workers)
    return Status::invalid_argument(
        fmt::format("[space] stages = {}: more stages than the {} workers", request.stages, limits.workers));
  if (links < 2)
    return Status::invalid_argument(fmt::format("{}: the model has {} top-level child{}, a pipeline needs 2 or more",
                                                why, links, links == 1 ? "" : "ren"));
  if (limits.workers < 2)
    return Status::invalid_argument(
        fmt::format("{}: a pipeline needs 2 or more workers, there is {}", why, limits.workers));
  const int most = std::min(links, limits.workers);
  // Asked for k stages: exactly k. Otherwise the fewest that fit.
  const int from = request.stages > 0 ? request.stages : 2;
  const int to = request.stages > 0 ? request.stages : most;
  for (int k = from; k <= to; ++k) {
    auto first = balanced_split(chain.link_bytes, k);
    if (!first.ok()) return first.status();
    auto plan = make_plan(chain, *first, why);
    const int64_t largest = *std::max_element(plan.stage_bytes.begin(), plan.stage_bytes.end());
    if (limits.budget_bytes == 0 || largest <= limits.budget_bytes) return plan;
    if (k == to)
      return Status::invalid_argument(fmt::format(
          "[cluster] model_memory_mb: the model's training state ({}) does not fit {} per worker even over {} stages "
          "(the largest stage needs {}; {} top-level children, {} workers)",
          megabytes(total), megabytes(limits.budget_bytes), k, megabytes(largest), links, limits.workers));
  }
  return Status::internal("plan_pipeline: no stage count tried");
}

std::vector<std::pair<int64_t, int64_t>> micro_batch_ranges(int64_t batch, int micro_batches) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t m = std::max<int64_t>(1, std::min<int64_t>(batch, micro_batches));
  int64_t begin = 0;
  for (int64_t i = 0; i < m && begin < batch; ++i) {
    int64_t size = batch / m + (i < batch % m ? 1 : 0);
    out.emplace_back(begin, begin + size);
    begin += size;
  }
  return out;
}

}  // namespace cerebro
