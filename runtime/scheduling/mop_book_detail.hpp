#pragma once
// Helpers MopBook's files share (mop_book.cpp, mop_book_gangs.cpp,
// mop_book_hand_over.cpp). Internal to runtime/scheduling.

#include <string>

#include <fmt/format.h>

#include "runtime/base/contract.hpp"
#include "runtime/scheduling/mop_book.hpp"

namespace cerebro::mop_book_detail {

// A call the book's state does not allow: a bug in the caller, so a contract
// violation ("internal error: MopBook::<operation>: <what>", then abort).
[[noreturn]] inline void misuse(const char* operation, const std::string& what) {
  contract_violation(fmt::format("MopBook::{}", operation), what);
}

inline bool is_over(ConfigState s) {
  return s == ConfigState::finished || s == ConfigState::stopped || s == ConfigState::failed;
}

}  // namespace cerebro::mop_book_detail
