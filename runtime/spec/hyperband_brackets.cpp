#include "runtime/spec/hyperband_brackets.hpp"

#include <fmt/format.h>

namespace cerebro {

namespace {

Status check_range(int32_t max_epochs, int32_t eta) {
  if (max_epochs < 1 || eta < 2) {
    return Status::invalid_argument(
        fmt::format("hyperband: needs max_epochs >= 1 and eta >= 2, got {} and {}", max_epochs, eta));
  }
  return Status::ok_status();
}

int64_t power(int64_t base, int32_t exponent) {
  int64_t out = 1;
  for (int32_t i = 0; i < exponent; ++i) out *= base;
  return out;
}

}  // namespace

Result<int32_t> hyperband_max_brackets(int32_t max_epochs, int32_t eta) {
  if (auto checked = check_range(max_epochs, eta); !checked.ok()) return checked;
  int32_t s_max = 0;  // the largest s with eta^s <= R, in integers (no log rounding)
  for (int64_t p = eta; p <= max_epochs; p *= eta) ++s_max;
  return s_max + 1;
}

Result<std::vector<HyperbandBracket>> hyperband_brackets(int32_t max_epochs, int32_t eta, int32_t brackets) {
  const auto max_brackets = hyperband_max_brackets(max_epochs, eta);
  if (!max_brackets.ok()) return max_brackets.status();
  const int32_t all = *max_brackets;
  if (brackets < 0 || brackets > all) {
    return Status::invalid_argument(
        fmt::format("hyperband: brackets must be in 1 .. {} for max_epochs {} and eta {} (0 = all), got {}", all,
                    max_epochs, eta, brackets));
  }
  const int32_t s_max = all - 1;
  const int32_t count = brackets == 0 ? all : brackets;
  std::vector<HyperbandBracket> out;
  for (int32_t s = s_max; s > s_max - count; --s) {
    HyperbandBracket b;
    b.s = s;
    // n = ceil((s_max + 1) * eta^s / (s + 1)), exactly in integers.
    const int64_t n = ((s_max + 1) * power(eta, s) + s) / (s + 1);
    for (int32_t i = 0; i <= s; ++i) {
      b.sizes.push_back(static_cast<int32_t>(n / power(eta, i)));
      b.epochs.push_back(static_cast<int32_t>(max_epochs / power(eta, s - i)));
    }
    out.push_back(std::move(b));
  }
  return out;
}

Result<int64_t> hyperband_config_count(int32_t max_epochs, int32_t eta, int32_t brackets) {
  auto all = hyperband_brackets(max_epochs, eta, brackets);
  if (!all.ok()) return all.status();
  int64_t total = 0;
  for (const auto& b : *all) total += b.sizes.front();
  return total;
}

}  // namespace cerebro
