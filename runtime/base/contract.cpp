#include "runtime/base/contract.hpp"

#include <cstdio>
#include <cstdlib>

namespace cerebro {

void contract_violation(const std::string& where, const std::string& what) {
  // stdio, not iostreams: nothing here may allocate through a broken heap more than it must.
  std::fprintf(stderr, "internal error: %s: %s\n", where.c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace cerebro
