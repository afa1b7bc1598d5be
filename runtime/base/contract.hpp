#pragma once
// A broken invariant of the core's own bookkeeping (a MopBook call its state
// does not allow, a shell confirming a copy it never issued) is a bug in the
// caller, not an expected failure: there is nothing a caller could do with it
// as a value. contract_violation() prints what broke and aborts, so the crash
// handler's stack trace shows where; a run resumes from its durable state.
//
// So is a search procedure's decision the schedule cannot take: the
// procedures are the core's own. Expected failures (bad input, bad files, a
// unit log that contradicts MOP) are Status values instead
// (runtime/base/status.hpp). The core never throws: docs/ARCHITECTURE.md
// "Errors are values with a code".

#include <string>

namespace cerebro {

// Writes "internal error: <where>: <what>" to stderr and aborts.
[[noreturn]] void contract_violation(const std::string& where, const std::string& what);

}  // namespace cerebro
