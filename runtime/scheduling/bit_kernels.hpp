#pragma once
// Kernels over bitsets stored as arrays of 64-bit words: the inner loops of
// MopBook's per-partition index (count and select the configs that are idle
// and need a partition). Each kernel is built for three instruction sets and
// picked once at load time: AVX-512 with VPOPCNTQ (8 words per instruction)
// and BMI2's PDEP (the k-th bit of a word without branches),
// POPCNT, and plain x86-64 / other targets (where __builtin_popcountll is a
// library call). Debian builds for baseline x86-64, so this cannot be left to
// compiler flags.

#include <cstddef>
#include <cstdint>

namespace cerebro::bits {

// Set bits of a[i] & b[i] over i < words.
int32_t count_common(const uint64_t* a, const uint64_t* b, size_t words);
// The same, leaving the count of each word in counts[0 .. counted_length(words)),
// for select_common_counted (a draw right after a count then reads the
// counts, not the words, to find its word).
size_t counted_length(size_t words);  // words rounded up to a multiple of 8
int32_t count_common_words(const uint64_t* a, const uint64_t* b, size_t words, uint16_t* counts);
// select_common(a, b, words, k) given count_common_words' counts of a & b.
int32_t select_common_counted(const uint64_t* a, const uint64_t* b, const uint16_t* counts, size_t words, int32_t k);
// a[i] |= b[i] over i < words; returns how many bits were added.
int32_t insert_all(uint64_t* a, const uint64_t* b, size_t words);
// Whether some a[i] & b[i] is non-zero.
bool intersects(const uint64_t* a, const uint64_t* b, size_t words);
// The bit position of the k-th (0-based) set bit of a & b, or -1 if there
// are k or fewer.
int32_t select_common(const uint64_t* a, const uint64_t* b, size_t words, int32_t k);
// The bit position of the k-th (0-based) set bit of words[first..]; there
// must be more than k.
int32_t select(const uint64_t* words, size_t first, int32_t k);

// The kernel set in use: the best the CPU supports, chosen at load time.
enum class KernelSet { plain, popcnt, avx512 };
KernelSet active_kernels();
// For tests: switches to `set` if the CPU supports it (returns false if not).
// Not thread-safe; call before any other thread uses the kernels.
bool use_kernels(KernelSet set);

}  // namespace cerebro::bits
