#include "runtime/scheduling/bit_kernels.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define CEREBRO_BITS_X86 1
#endif

namespace cerebro::bits {

size_t counted_length(size_t words) { return (words + 7) / 8 * 8; }

namespace {

// The sum of 8 per-word counts (each <= 64): four 16-bit lanes per 64-bit
// word, summed by one multiplication each.
inline int32_t block_sum(const uint16_t* counts) {
  uint64_t low, high;
  std::memcpy(&low, counts, sizeof low);
  std::memcpy(&high, counts + 4, sizeof high);
  constexpr uint64_t kLanes = 0x0001000100010001ULL;
  return static_cast<int32_t>(((low * kLanes) >> 48) + ((high * kLanes) >> 48));
}

// Portable versions, compiled as plain code and (on x86-64) with POPCNT. The
// k-th set bit of one word (k < its popcount) halves the word six times.
#define CEREBRO_SCALAR_KERNELS(SUFFIX, ATTRIBUTE)                                                                \
  ATTRIBUTE inline int32_t select_in_word_##SUFFIX(uint64_t x, int32_t k) {                                      \
    int32_t position = 0;                                                                                        \
    for (int32_t width = 32; width > 0; width /= 2) {                                                            \
      uint64_t low = x & ((uint64_t{1} << width) - 1);                                                           \
      int32_t in_low = __builtin_popcountll(low);                                                                \
      if (k >= in_low) {                                                                                         \
        k -= in_low;                                                                                             \
        x >>= width;                                                                                             \
        position += width;                                                                                       \
      } else {                                                                                                   \
        x = low;                                                                                                 \
      }                                                                                                          \
    }                                                                                                            \
    return position;                                                                                             \
  }                                                                                                              \
  ATTRIBUTE int32_t count_common_##SUFFIX(const uint64_t* a, const uint64_t* b, size_t words) {                  \
    int32_t n = 0;                                                                                               \
    for (size_t i = 0; i < words; ++i) n += __builtin_popcountll(a[i] & b[i]);                                   \
    return n;                                                                                                    \
  }                                                                                                              \
  ATTRIBUTE int32_t count_common_words_##SUFFIX(const uint64_t* a, const uint64_t* b, size_t words,              \
                                                uint16_t* counts) {                                              \
    int32_t total = 0;                                                                                           \
    for (size_t i = 0; i < words; ++i) {                                                                         \
      counts[i] = static_cast<uint16_t>(__builtin_popcountll(a[i] & b[i]));                                      \
      total += counts[i];                                                                                        \
    }                                                                                                            \
    for (size_t i = words; i < counted_length(words); ++i) counts[i] = 0;                                        \
    return total;                                                                                                \
  }                                                                                                              \
  ATTRIBUTE int32_t select_common_counted_##SUFFIX(const uint64_t* a, const uint64_t* b, const uint16_t* counts, \
                                                   size_t words, int32_t k) {                                    \
    for (size_t i = 0; i < words; i += 8) {                                                                      \
      int32_t in_block = block_sum(counts + i);                                                                  \
      if (k < in_block) {                                                                                        \
        for (size_t j = i;; ++j) {                                                                               \
          if (k < counts[j]) return static_cast<int32_t>(j * 64) + select_in_word_##SUFFIX(a[j] & b[j], k);      \
          k -= counts[j];                                                                                        \
        }                                                                                                        \
      }                                                                                                          \
      k -= in_block;                                                                                             \
    }                                                                                                            \
    return -1;                                                                                                   \
  }                                                                                                              \
  ATTRIBUTE int32_t insert_all_##SUFFIX(uint64_t* a, const uint64_t* b, size_t words) {                          \
    int32_t added = 0;                                                                                           \
    for (size_t i = 0; i < words; ++i) {                                                                         \
      uint64_t bits = b[i] & ~a[i];                                                                              \
      if (bits) {                                                                                                \
        a[i] |= bits;                                                                                            \
        added += __builtin_popcountll(bits);                                                                     \
      }                                                                                                          \
    }                                                                                                            \
    return added;                                                                                                \
  }                                                                                                              \
  ATTRIBUTE bool intersects_##SUFFIX(const uint64_t* a, const uint64_t* b, size_t words) {                       \
    for (size_t i = 0; i < words; ++i) {                                                                         \
      if (a[i] & b[i]) return true;                                                                              \
    }                                                                                                            \
    return false;                                                                                                \
  }                                                                                                              \
  ATTRIBUTE int32_t select_common_##SUFFIX(const uint64_t* a, const uint64_t* b, size_t words, int32_t k) {      \
    for (size_t i = 0; i < words; ++i) {                                                                         \
      uint64_t word = a[i] & b[i];                                                                               \
      int32_t in_word = __builtin_popcountll(word);                                                              \
      if (k < in_word) {                                                                                         \
        return static_cast<int32_t>(i * 64) + select_in_word_##SUFFIX(word, k);                                  \
      }                                                                                                          \
      k -= in_word;                                                                                              \
    }                                                                                                            \
    return -1;                                                                                                   \
  }                                                                                                              \
  ATTRIBUTE int32_t select_##SUFFIX(const uint64_t* words, size_t first, int32_t k) {                            \
    size_t i = first;                                                                                            \
    for (;; ++i) {                                                                                               \
      int32_t in_word = __builtin_popcountll(words[i]);                                                          \
      if (k < in_word) break;                                                                                    \
      k -= in_word;                                                                                              \
    }                                                                                                            \
    return static_cast<int32_t>(i * 64) + select_in_word_##SUFFIX(words[i], k);                                  \
  }

CEREBRO_SCALAR_KERNELS(plain, )
#if CEREBRO_BITS_X86
CEREBRO_SCALAR_KERNELS(popcnt, __attribute__((target("popcnt"))))
#endif
#undef CEREBRO_SCALAR_KERNELS

#if CEREBRO_BITS_X86
#define CEREBRO_AVX512 __attribute__((target("avx512f,avx512vpopcntdq,popcnt,bmi2")))

// Words i .. i+7 of a & b (fewer at the end: the rest read as zero).
CEREBRO_AVX512 inline __m512i and_block(const uint64_t* a, const uint64_t* b, size_t i, size_t words) {
  if (i + 8 <= words) return _mm512_and_si512(_mm512_loadu_si512(a + i), _mm512_loadu_si512(b + i));
  auto mask = static_cast<__mmask8>((1u << (words - i)) - 1);
  return _mm512_and_si512(_mm512_maskz_loadu_epi64(mask, a + i), _mm512_maskz_loadu_epi64(mask, b + i));
}

// The k-th set bit of x (k < popcount(x)) without branches.
CEREBRO_AVX512 inline int32_t select_in_word_bmi2(uint64_t x, int32_t k) {
  return static_cast<int32_t>(__builtin_ctzll(_pdep_u64(uint64_t{1} << k, x)));
}

CEREBRO_AVX512 int32_t count_common_avx512(const uint64_t* a, const uint64_t* b, size_t words) {
  __m512i counts = _mm512_setzero_si512();
  for (size_t i = 0; i < words; i += 8)
    counts = _mm512_add_epi64(counts, _mm512_popcnt_epi64(and_block(a, b, i, words)));
  return static_cast<int32_t>(_mm512_reduce_add_epi64(counts));
}

CEREBRO_AVX512 int32_t count_common_words_avx512(const uint64_t* a, const uint64_t* b, size_t words, uint16_t* counts) {
  __m512i total = _mm512_setzero_si512();
  for (size_t i = 0; i < words; i += 8) {
    __m512i in_words = _mm512_popcnt_epi64(and_block(a, b, i, words));
    total = _mm512_add_epi64(total, in_words);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(counts + i), _mm512_cvtepi64_epi16(in_words));
  }
  return static_cast<int32_t>(_mm512_reduce_add_epi64(total));
}

CEREBRO_AVX512 int32_t select_common_counted_avx512(const uint64_t* a, const uint64_t* b, const uint16_t* counts,
                                                    size_t words, int32_t k) {
  for (size_t i = 0; i < words; i += 8) {
    int32_t in_block = block_sum(counts + i);
    if (k < in_block) {
      for (size_t j = i;; ++j) {
        if (k < counts[j]) return static_cast<int32_t>(j * 64) + select_in_word_bmi2(a[j] & b[j], k);
        k -= counts[j];
      }
    }
    k -= in_block;
  }
  return -1;
}

CEREBRO_AVX512 int32_t insert_all_avx512(uint64_t* a, const uint64_t* b, size_t words) {
  __m512i added = _mm512_setzero_si512();
  for (size_t i = 0; i < words; i += 8) {
    auto mask = static_cast<__mmask8>(i + 8 <= words ? 0xff : (1u << (words - i)) - 1);
    __m512i mine = _mm512_maskz_loadu_epi64(mask, a + i);
    __m512i others = _mm512_maskz_loadu_epi64(mask, b + i);
    added = _mm512_add_epi64(added, _mm512_popcnt_epi64(_mm512_andnot_si512(mine, others)));
    _mm512_mask_storeu_epi64(a + i, mask, _mm512_or_si512(mine, others));
  }
  return static_cast<int32_t>(_mm512_reduce_add_epi64(added));
}

CEREBRO_AVX512 bool intersects_avx512(const uint64_t* a, const uint64_t* b, size_t words) {
  for (size_t i = 0; i < words; i += 8) {
    if (_mm512_test_epi64_mask(and_block(a, b, i, words), and_block(a, b, i, words))) return true;
  }
  return false;
}

CEREBRO_AVX512 int32_t select_avx512(const uint64_t* words, size_t first, int32_t k) {
  size_t i = first;
  for (;; ++i) {
    int32_t in_word = __builtin_popcountll(words[i]);
    if (k < in_word) break;
    k -= in_word;
  }
  return static_cast<int32_t>(i * 64) + select_in_word_bmi2(words[i], k);
}

CEREBRO_AVX512 int32_t select_common_avx512(const uint64_t* a, const uint64_t* b, size_t words, int32_t k) {
  for (size_t i = 0; i < words; i += 8) {
    __m512i block = and_block(a, b, i, words);
    auto in_block = static_cast<int32_t>(_mm512_reduce_add_epi64(_mm512_popcnt_epi64(block)));
    if (k < in_block) {
      alignas(64) uint64_t word[8];
      _mm512_store_si512(word, block);
      for (size_t j = 0;; ++j) {
        int32_t in_word = __builtin_popcountll(word[j]);
        if (k < in_word) {
          return static_cast<int32_t>((i + j) * 64) + select_in_word_bmi2(word[j], k);
        }
        k -= in_word;
      }
    }
    k -= in_block;
  }
  return -1;
}
#undef CEREBRO_AVX512

using Kernels = KernelSet;
bool supported(Kernels set) {
  __builtin_cpu_init();
  switch (set) {
    case Kernels::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") &&
             __builtin_cpu_supports("bmi2");
    case Kernels::popcnt: return __builtin_cpu_supports("popcnt");
    case Kernels::plain: return true;
  }
  return false;
}
Kernels detect() {
  if (supported(Kernels::avx512)) return Kernels::avx512;
  if (supported(Kernels::popcnt)) return Kernels::popcnt;
  return Kernels::plain;
}
Kernels kKernels = detect();
#endif

}  // namespace

#if CEREBRO_BITS_X86
int32_t count_common(const uint64_t* a, const uint64_t* b, size_t words) {
  switch (kKernels) {
    case Kernels::avx512: return count_common_avx512(a, b, words);
    case Kernels::popcnt: return count_common_popcnt(a, b, words);
    case Kernels::plain: break;
  }
  return count_common_plain(a, b, words);
}
int32_t count_common_words(const uint64_t* a, const uint64_t* b, size_t words, uint16_t* counts) {
  switch (kKernels) {
    case Kernels::avx512: return count_common_words_avx512(a, b, words, counts);
    case Kernels::popcnt: return count_common_words_popcnt(a, b, words, counts);
    case Kernels::plain: break;
  }
  return count_common_words_plain(a, b, words, counts);
}
int32_t select_common_counted(const uint64_t* a, const uint64_t* b, const uint16_t* counts, size_t words, int32_t k) {
  switch (kKernels) {
    case Kernels::avx512: return select_common_counted_avx512(a, b, counts, words, k);
    case Kernels::popcnt: return select_common_counted_popcnt(a, b, counts, words, k);
    case Kernels::plain: break;
  }
  return select_common_counted_plain(a, b, counts, words, k);
}
int32_t insert_all(uint64_t* a, const uint64_t* b, size_t words) {
  switch (kKernels) {
    case Kernels::avx512: return insert_all_avx512(a, b, words);
    case Kernels::popcnt: return insert_all_popcnt(a, b, words);
    case Kernels::plain: break;
  }
  return insert_all_plain(a, b, words);
}
bool intersects(const uint64_t* a, const uint64_t* b, size_t words) {
  switch (kKernels) {
    case Kernels::avx512: return intersects_avx512(a, b, words);
    case Kernels::popcnt: return intersects_popcnt(a, b, words);
    case Kernels::plain: break;
  }
  return intersects_plain(a, b, words);
}
int32_t select_common(const uint64_t* a, const uint64_t* b, size_t words, int32_t k) {
  switch (kKernels) {
    case Kernels::avx512: return select_common_avx512(a, b, words, k);
    case Kernels::popcnt: return select_common_popcnt(a, b, words, k);
    case Kernels::plain: break;
  }
  return select_common_plain(a, b, words, k);
}
int32_t select(const uint64_t* words, size_t first, int32_t k) {
  switch (kKernels) {
    case Kernels::avx512: return select_avx512(words, first, k);
    case Kernels::popcnt: return select_popcnt(words, first, k);
    case Kernels::plain: break;
  }
  return select_plain(words, first, k);
}
KernelSet active_kernels() { return kKernels; }
bool use_kernels(KernelSet set) {
  if (!supported(set)) return false;
  kKernels = set;
  return true;
}
#else
KernelSet active_kernels() { return KernelSet::plain; }
bool use_kernels(KernelSet set) { return set == KernelSet::plain; }
int32_t count_common(const uint64_t* a, const uint64_t* b, size_t words) { return count_common_plain(a, b, words); }
int32_t count_common_words(const uint64_t* a, const uint64_t* b, size_t words, uint16_t* counts) {
  return count_common_words_plain(a, b, words, counts);
}
int32_t select_common_counted(const uint64_t* a, const uint64_t* b, const uint16_t* counts, size_t words, int32_t k) {
  return select_common_counted_plain(a, b, counts, words, k);
}
int32_t insert_all(uint64_t* a, const uint64_t* b, size_t words) { return insert_all_plain(a, b, words); }
bool intersects(const uint64_t* a, const uint64_t* b, size_t words) { return intersects_plain(a, b, words); }
int32_t select_common(const uint64_t* a, const uint64_t* b, size_t words, int32_t k) {
  return select_common_plain(a, b, words, k);
}
int32_t select(const uint64_t* words, size_t first, int32_t k) { return select_plain(words, first, k); }
#endif

}  // namespace cerebro::bits
