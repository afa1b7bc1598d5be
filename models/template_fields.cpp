#include "models/template_fields.hpp"

#include <fmt/format.h>

namespace cerebro::models {

namespace {

using datasets::TaskKind;

void add_tokens(Fields& fields, const torch::Tensor& ids) {
  auto tokens = ids.to(torch::kInt64);
  fields.insert("tokens", tokens);
  fields.insert("lengths", tokens.ne(0).sum(1));
}

[[noreturn]] void no_fields(const DataShape& shape) {
  throw Error(
      fmt::format("a template whose forward takes a Dict[str, Tensor] needs a task with fields "
                  "(captioning, detection, language_model); this one is {}: take one Tensor",
                  datasets::to_string(shape.task)));
}

}  // namespace

Fields input_fields(const DataShape& shape, const torch::Tensor& input) {
  Fields fields;
  if (shape.task == TaskKind::language_model) {
    add_tokens(fields, input);
  } else if (shape.task == TaskKind::captioning) {
    const auto& s = shape.sample_shape;
    const int64_t pixels = s.at(0) * s.at(1) * s.at(2);
    fields.insert("image", input.slice(1, 0, pixels).reshape({input.size(0), s[0], s[1], s[2]}));
    add_tokens(fields, input.slice(1, pixels));
  } else if (shape.task == TaskKind::detection) {
    fields.insert("image", input);
  } else {
    no_fields(shape);
  }
  return fields;
}

Fields target_fields(const DataShape& shape, const torch::Tensor& target) {
  Fields fields;
  if (shape.task == TaskKind::language_model || shape.task == TaskKind::captioning) {
    add_tokens(fields, target);
  } else if (shape.task == TaskKind::detection) {
    auto boxes = target.reshape({target.size(0), -1, 5});
    auto labels = boxes.select(2, 4).to(torch::kInt64);
    fields.insert("boxes", boxes.slice(2, 0, 4).contiguous());
    fields.insert("labels", labels);
    fields.insert("counts", labels.ge(0).sum(1));
  } else {
    no_fields(shape);
  }
  return fields;
}

}  // namespace cerebro::models
