#pragma once
// Status and Result<T>: expected failures as values (the RocksDB Status idea).
// A failed Status carries a message meant for a human: it names what is wrong
// and where (file, spec key, config). Header-only so every library can use it.

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace cerebro {

class Status {
 public:
  Status() = default;
  static Status ok_status() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  explicit operator bool() const { return ok(); }
  // Empty for an ok status.
  const std::string& message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }
  // Prefixes context, e.g. the file or spec key the failure happened in.
  Status with_context(const std::string& context) const {
    return ok() ? *this : Status(context + ": " + *message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

// Thrown only at boundaries (CLI, actor shells) to turn a Status into an exit.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::error("internal: Result built from an ok Status");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }
  const std::string& error() const { return status_.message(); }

  T& value() & { check(); return *value_; }
  const T& value() const& { check(); return *value_; }
  T&& value() && { check(); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The value, or throws Error with the status message.
  T take_or_throw() && {
    if (!ok()) throw Error(status_.message());
    return std::move(*value_);
  }

 private:
  void check() const {
    if (!ok()) throw Error("accessed the value of a failed Result: " + status_.message());
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace cerebro
