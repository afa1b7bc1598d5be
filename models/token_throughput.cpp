#include "models/token_throughput.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>

#include "models/task.hpp"
#include "models/trainee.hpp"

namespace cerebro::models {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<TokenPass> unit_against_plain_loop(const nlohmann::json& params, const ShapeInfo& shape,
                                          const datasets::Dataset& partition, uint64_t seed) {
  return detail::guarded<TokenPass>("token throughput", [&] {
    if (shape.task != datasets::TaskKind::language_model)
      throw Error("the token throughput needs a language model's token windows");
    TokenPass pass;
    auto state = initial_state(params, shape, partition, seed);
    if (!state.ok()) throw Error(state.status());
    UnitInput in;
    in.params = &params;
    in.shape = shape;
    in.state = &*state;
    in.partition = &partition;
    in.seed = seed + 1;
    auto unit = train_unit(in);
    if (!unit.ok()) throw Error(unit.status());
    pass.unit_s = unit->train_s;

    // The plain loop: the same initial weights and batch order, nothing of the unit trainer.
    ParamReader reader(params);
    TrainingParams training = TrainingParams::read(reader);
    std::unique_ptr<Model> model;
    {
      const detail::SeededWeights seeded(seed);
      model = build_model(training.model, reader, DataShape{shape.sample_shape, shape.num_classes, shape.task});
    }
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(training.lr));
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed + 1);
    model->set_generator(generator);
    model->set_training(true);
    auto x = detail::features_of(partition);
    auto order = torch::randperm(partition.size(), generator, torch::kInt64);
    namespace F = torch::nn::functional;
    auto start = std::chrono::steady_clock::now();
    for (int64_t begin = 0; begin < partition.size(); begin += training.batch_size) {
      auto ids = x.index_select(0, order.slice(0, begin, std::min(begin + training.batch_size, partition.size())));
      auto logits = model->forward(ids);
      const int64_t t = logits.size(1), v = logits.size(2);
      auto next = ids.slice(1, 1, t).to(torch::kInt64).reshape({-1});
      auto loss = F::cross_entropy(logits.slice(1, 0, t - 1).reshape({-1, v}), next,
                                   F::CrossEntropyFuncOptions().ignore_index(0));
      adam.zero_grad();
      loss.backward();
      adam.step();
      pass.tokens += next.ne(0).sum().item<int64_t>();
    }
    pass.plain_s = seconds_since(start);
    return pass;
  });
}

}  // namespace cerebro::models
