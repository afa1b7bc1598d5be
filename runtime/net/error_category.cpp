#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace {

// The message an error of ours carries (empty when it carries none).
std::string message_of(const caf::message& context) {
  return context.match_elements<std::string>() ? context.get_as<std::string>(0) : std::string();
}

// Codes from a newer peer that this build does not know stay failures.
StatusCode code_of(uint8_t value) {
  return value <= static_cast<uint8_t>(kLastStatusCode) ? static_cast<StatusCode>(value) : StatusCode::unknown;
}

}  // namespace

caf::error make_error(StatusCode code) { return {static_cast<uint8_t>(code), status_error_category}; }

caf::error make_error(StatusCode code, std::string message) {
  return {static_cast<uint8_t>(code), status_error_category, caf::make_message(std::move(message))};
}

caf::error to_error(const Status& status) {
  if (status.ok()) return caf::none;
  return make_error(status.code(), status.message());
}

Status to_status(const caf::error& error) {
  if (!error) return Status::ok_status();
  // (CAF makes code 0 no error at all, so an error of ours is never ok.)
  if (error.category() == status_error_category) return Status::of(code_of(error.code()), message_of(error.context()));
  // CAF's own (a timeout, a lost peer): no code of ours says what they mean
  // to the caller, so they stay unclassified.
  const auto& context = error.context();
  if (context.match_elements<std::string>()) return Status::of(StatusCode::unknown, context.get_as<std::string>(0));
  return Status::of(StatusCode::unknown, caf::to_string(error));
}

void register_error_category(caf::actor_system_config& config) {
  config.add_error_category(status_error_category, [](uint8_t code, caf::atom_value, const caf::message& context) {
    auto message = message_of(context);
    std::string name = to_string(code_of(code));
    return message.empty() ? name : name + ": " + message;
  });
}

}  // namespace cerebro
