// The simulator's low-level pieces: the bitset kernels behind MopBook's
// per-partition index (checked against a plain bit-by-bit reference on every
// length around the 8-word blocks and vector widths) and the event queue
// (checked against an ordered multimap: earliest first, ties in push order).
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "runtime/scheduling/bit_kernels.hpp"
#include "runtime/sim/event_queue.hpp"
#include "test/support/contract_check.hpp"

namespace cerebro {
namespace {

std::vector<uint64_t> random_words(std::mt19937_64& rng, size_t words, int density_percent) {
  std::vector<uint64_t> out(words, 0);
  for (size_t i = 0; i < words * 64; ++i) {
    if (static_cast<int>(rng() % 100) < density_percent) out[i / 64] |= uint64_t{1} << (i % 64);
  }
  return out;
}

bool bit(const std::vector<uint64_t>& words, size_t i) { return (words[i / 64] >> (i % 64)) & 1u; }

void check_kernels_against_reference() {
  std::mt19937_64 rng(7);
  for (size_t words : {1, 2, 7, 8, 9, 15, 16, 17, 24, 157}) {
    for (int density : {0, 3, 50, 100}) {
      std::vector<uint64_t> a = random_words(rng, words, density), b = random_words(rng, words, 60);
      std::vector<size_t> common;
      for (size_t i = 0; i < words * 64; ++i) {
        if (bit(a, i) && bit(b, i)) common.push_back(i);
      }
      auto n = static_cast<int32_t>(common.size());
      BOOST_TEST_CONTEXT("words " << words << ", density " << density) {
        BOOST_TEST(bits::count_common(a.data(), b.data(), words) == n);
        BOOST_TEST(bits::intersects(a.data(), b.data(), words) == (n > 0));
        std::vector<uint16_t> counts(bits::counted_length(words), 99);
        BOOST_TEST(bits::counted_length(words) % 8 == 0u);
        BOOST_TEST(bits::count_common_words(a.data(), b.data(), words, counts.data()) == n);
        for (size_t i = 0; i < counts.size(); ++i) {
          int expected = 0;
          for (size_t j : common) expected += j / 64 == i ? 1 : 0;
          BOOST_TEST(counts[i] == expected);
        }
        for (int32_t k = 0; k < n; ++k) {
          BOOST_TEST(bits::select_common_counted(a.data(), b.data(), counts.data(), words, k) ==
                     static_cast<int32_t>(common[k]));
        }
        BOOST_TEST(bits::select_common_counted(a.data(), b.data(), counts.data(), words, n) == -1);
        for (int32_t k = 0; k < n; ++k) {
          BOOST_TEST(bits::select_common(a.data(), b.data(), words, k) == static_cast<int32_t>(common[k]));
        }
        BOOST_TEST(bits::select_common(a.data(), b.data(), words, n) == -1);
        std::vector<size_t> in_a;
        for (size_t i = 0; i < words * 64; ++i) {
          if (bit(a, i)) in_a.push_back(i);
        }
        for (size_t k = 0; k < in_a.size(); k += 1 + in_a.size() / 50) {
          BOOST_TEST(bits::select(a.data(), 0, static_cast<int32_t>(k)) == static_cast<int32_t>(in_a[k]));
        }
        std::vector<uint64_t> united = a;
        int32_t added = bits::insert_all(united.data(), b.data(), words);
        int32_t expected_added = 0;
        for (size_t i = 0; i < words * 64; ++i) {
          expected_added += bit(b, i) && !bit(a, i) ? 1 : 0;
          BOOST_TEST(bit(united, i) == (bit(a, i) || bit(b, i)));
        }
        BOOST_TEST(added == expected_added);
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bit_kernels)

// Every kernel set this CPU supports (AVX-512, POPCNT, plain), then back to
// the one chosen at load time.
BOOST_AUTO_TEST_CASE(count_select_and_union_match_a_bit_by_bit_reference) {
  const bits::KernelSet chosen = bits::active_kernels();
  int sets_checked = 0;
  for (bits::KernelSet set : {bits::KernelSet::avx512, bits::KernelSet::popcnt, bits::KernelSet::plain}) {
    if (!bits::use_kernels(set)) continue;
    ++sets_checked;
    BOOST_TEST_CONTEXT("kernel set " << static_cast<int>(set)) { check_kernels_against_reference(); }
  }
  BOOST_TEST(bits::use_kernels(chosen));
  BOOST_TEST(sets_checked >= 2);  // plain always, and POPCNT on any x86-64 of this century
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(event_queue)

BOOST_AUTO_TEST_CASE(pops_earliest_first_and_ties_in_push_order) {
  std::mt19937_64 rng(3);
  EventQueue queue;
  std::multimap<std::pair<double, int64_t>, uint32_t> reference;
  int64_t seq = 0;
  for (int step = 0; step < 100000; ++step) {
    if (reference.empty() || rng() % 3 != 0) {
      double time = static_cast<double>(rng() % 40) * 0.25;  // many ties
      auto payload = static_cast<uint32_t>(rng() % (EventQueue::kMaxPayload + 1));
      queue.push(time, payload);
      reference.emplace(std::make_pair(time, seq++), payload);
    } else {
      EventQueue::Event event = queue.pop();
      auto first = reference.begin();
      BOOST_REQUIRE_EQUAL(event.time, first->first.first);
      BOOST_REQUIRE_EQUAL(event.payload, first->second);
      reference.erase(first);
    }
    BOOST_REQUIRE_EQUAL(queue.size(), reference.size());
  }
}

BOOST_AUTO_TEST_CASE(refuses_negative_or_non_finite_times_and_oversized_payloads) {
  EventQueue queue;
  CEREBRO_CHECK_CONTRACT(queue.push(-1.0, 0), "EventQueue::push: time must be finite and >= 0");
  CEREBRO_CHECK_CONTRACT(queue.push(std::numeric_limits<double>::infinity(), 0), "got inf and 0");
  CEREBRO_CHECK_CONTRACT(queue.push(std::numeric_limits<double>::quiet_NaN(), 0), "got nan and 0");
  CEREBRO_CHECK_CONTRACT(queue.push(1.0, EventQueue::kMaxPayload + 1), "EventQueue::push");
  queue.push(-0.0, 5);  // negative zero is zero
  queue.push(0.0, 6);
  BOOST_TEST(queue.pop().payload == 5u);
  BOOST_TEST(queue.pop().payload == 6u);
  BOOST_TEST(queue.empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro
