#pragma once
// Status and Result<T>: expected failures as values (the RocksDB Status idea).
// A failed Status carries a code, which callers branch on, and a message
// meant for a human, which names what is wrong and where (file, spec key,
// config). Code never branches on the message text. Header-only so every
// library can use it.
//
// The core (runtime/ except runtime/net, and datasets/) reports failures only
// as these values: it never throws, and a broken invariant of its own
// bookkeeping is a contract_violation (runtime/base/contract.hpp), which
// aborts. test_layering_core_never_throws scans the core's sources for it.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/base/contract.hpp"

namespace cerebro {

// What kind of failure a Status is. The values travel between processes
// inside CAF errors (runtime/net/error_category.hpp): append, never renumber.
enum class StatusCode : uint8_t {
  ok = 0,
  unknown = 1,              // not classified: CAF's own errors (a timeout, a lost peer) as to_status gives them
  invalid_argument = 2,     // bad input: a spec, a file's content, a flag, a request
  not_found = 3,            // a file, key, config or experiment that does not exist
  corruption = 4,           // stored bytes fail their checksum: the data itself is bad
  io_error = 5,             // the OS or RocksDB could not read or write; the data may be fine
  failed_precondition = 6,  // the request does not fit the current state (e.g. a finished run)
  unavailable = 7,          // not now: the same request may succeed in a moment
  internal = 8,             // an invariant broke: a bug
  permission_denied = 9,    // the caller may not have it read or do this (a path outside the data roots)
};
// The newest code: a peer's code above it is one this build does not know
// (runtime/net/error_category.cpp reads it as unknown). Move it when appending.
constexpr StatusCode kLastStatusCode = StatusCode::permission_denied;

// "corruption", "io_error", ...: the enumerator's name.
inline const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::unknown: return "unknown";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::not_found: return "not_found";
    case StatusCode::corruption: return "corruption";
    case StatusCode::io_error: return "io_error";
    case StatusCode::failed_precondition: return "failed_precondition";
    case StatusCode::unavailable: return "unavailable";
    case StatusCode::internal: return "internal";
    case StatusCode::permission_denied: return "permission_denied";
  }
  return "unknown";
}

class Status {
 public:
  Status() = default;
  static Status ok_status() { return Status(); }
  // A failure of `code` (an ok code gives an ok status: there is nothing to report).
  static Status of(StatusCode code, std::string message) { return Status(code, std::move(message)); }
  static Status invalid_argument(std::string message) {
    return Status(StatusCode::invalid_argument, std::move(message));
  }
  static Status not_found(std::string message) { return Status(StatusCode::not_found, std::move(message)); }
  static Status corruption(std::string message) { return Status(StatusCode::corruption, std::move(message)); }
  static Status io_error(std::string message) { return Status(StatusCode::io_error, std::move(message)); }
  static Status failed_precondition(std::string message) {
    return Status(StatusCode::failed_precondition, std::move(message));
  }
  static Status unavailable(std::string message) { return Status(StatusCode::unavailable, std::move(message)); }
  static Status internal(std::string message) { return Status(StatusCode::internal, std::move(message)); }
  static Status permission_denied(std::string message) {
    return Status(StatusCode::permission_denied, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  bool is_invalid_argument() const { return code_ == StatusCode::invalid_argument; }
  bool is_not_found() const { return code_ == StatusCode::not_found; }
  bool is_corruption() const { return code_ == StatusCode::corruption; }
  bool is_io_error() const { return code_ == StatusCode::io_error; }
  bool is_failed_precondition() const { return code_ == StatusCode::failed_precondition; }
  bool is_unavailable() const { return code_ == StatusCode::unavailable; }
  bool is_internal() const { return code_ == StatusCode::internal; }
  bool is_permission_denied() const { return code_ == StatusCode::permission_denied; }

  // Empty for an ok status.
  const std::string& message() const { return message_; }
  // Prefixes context, e.g. the file or spec key the failure happened in. The
  // code stays: a corrupt state is still corrupt with its config named.
  Status with_context(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Status(StatusCode code, std::string message)
      : code_(code), message_(code == StatusCode::ok ? std::string() : std::move(message)) {}
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

// The exception of the boundaries: tools/ (a command's error exit), actors/
// (an actor shell that cannot go on) and models/ (LibTorch's own failures
// are exceptions there). It is declared here, next to Status, because models/
// cannot include runtime/net and every boundary shares the one type with its
// code; the core never throws or catches it (test_layering_core_never_throws).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, StatusCode code = StatusCode::unknown)
      : std::runtime_error(message), code_(code) {}
  explicit Error(const Status& status) : Error(status.message(), status.code()) {}
  StatusCode code() const { return code_; }

 private:
  StatusCode code_;
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::internal("internal: Result built from an ok Status");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }
  // StatusCode::ok when there is a value.
  StatusCode code() const { return status_.code(); }
  const std::string& error() const { return status_.message(); }

  // value() of a failed Result is a bug in the caller (it did not check
  // ok()): a contract violation, which aborts with the failure's message.
  T& value() & {
    check();
    return *value_;
  }
  const T& value() const& {
    check();
    return *value_;
  }
  T&& value() && {
    check();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void check() const {
    if (!ok()) contract_violation("Result::value", "accessed the value of a failed Result: " + status_.message());
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace cerebro
