#pragma once
// PartitionSet: a fixed-size set of partitions 0 .. size-1 as a bitset, with
// its element count. MopBook keeps each config's pending partitions in one, so
// starting, requeueing and resetting units cost O(1) or O(size / 64), and a
// simulator can intersect two sets a word at a time. Up to 1,024 partitions
// the bits live inside the object: a config's entry and its bits are then one
// block of memory, not two that a scheduler must fetch one after the other.

#include <cstdint>
#include <vector>

#include "runtime/scheduling/bit_kernels.hpp"
#include "runtime/base/ids.hpp"

namespace cerebro {

class PartitionSet {
 public:
  PartitionSet() = default;
  explicit PartitionSet(int32_t size) : size_(size), words_(size > kInlineBits ? (size + 63) / 64 : 0, 0) {}

  int32_t size() const { return size_; }  // the universe 0 .. size-1
  int32_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

  bool contains(PartitionId p) const { return (data()[p >> 6] >> (p & 63)) & 1u; }
  // Both return whether the set changed.
  bool insert(PartitionId p) {
    uint64_t bit = uint64_t{1} << (p & 63);
    uint64_t& word = data()[p >> 6];
    if (word & bit) return false;
    word |= bit;
    ++count_;
    return true;
  }
  bool erase(PartitionId p) {
    uint64_t bit = uint64_t{1} << (p & 63);
    uint64_t& word = data()[p >> 6];
    if (!(word & bit)) return false;
    word &= ~bit;
    --count_;
    return true;
  }
  void fill() {
    uint64_t* words = data();
    for (int32_t i = 0, n = word_count(); i < n; ++i) words[i] = ~uint64_t{0};
    if (size_ & 63) words[word_count() - 1] = (uint64_t{1} << (size_ & 63)) - 1;
    count_ = size_;
  }
  // Adds every element of `other` (same size).
  void insert_all(const PartitionSet& other) {
    count_ += bits::insert_all(data(), other.data(), static_cast<size_t>(common_word_count(other)));
  }
  void clear() {
    uint64_t* words = data();
    for (int32_t i = 0, n = word_count(); i < n; ++i) words[i] = 0;
    count_ = 0;
  }

  // Calls f(p) for every element, ascending.
  template <typename F>
  void for_each(F&& f) const {
    const uint64_t* words = data();
    for (int32_t i = 0, n = word_count(); i < n; ++i) {
      for (uint64_t word = words[i]; word; word &= word - 1) {
        f(static_cast<PartitionId>(i * 64 + __builtin_ctzll(word)));
      }
    }
  }
  // Calls f(p) for every element also in `other` (same size), ascending.
  template <typename F>
  void for_each_common(const PartitionSet& other, F&& f) const {
    const uint64_t *words = data(), *others = other.data();
    for (int32_t i = 0, n = common_word_count(other); i < n; ++i) {
      for (uint64_t word = words[i] & others[i]; word; word &= word - 1) {
        f(static_cast<PartitionId>(i * 64 + __builtin_ctzll(word)));
      }
    }
  }
  // Calls f(p) for the elements also in `other`, ascending, until f returns
  // true; returns whether it did. f may change either set: each word is read
  // once, before its elements are visited.
  template <typename F>
  bool any_common(const PartitionSet& other, F&& f) const {
    const uint64_t *words = data(), *others = other.data();
    for (int32_t i = 0, n = common_word_count(other); i < n; ++i) {
      for (uint64_t word = words[i] & others[i]; word; word &= word - 1) {
        if (f(static_cast<PartitionId>(i * 64 + __builtin_ctzll(word)))) return true;
      }
    }
    return false;
  }
  std::vector<PartitionId> to_vector() const {
    std::vector<PartitionId> out;
    out.reserve(count_);
    for_each([&](PartitionId p) { out.push_back(p); });
    return out;
  }

 private:
  static constexpr int32_t kInlineBits = 1024;
  int32_t word_count() const { return (size_ + 63) / 64; }
  // Loops take their bound once: writes through data() could alias size_.
  int32_t common_word_count(const PartitionSet& other) const {
    int32_t mine = word_count(), others = other.word_count();
    return mine < others ? mine : others;
  }
  uint64_t* data() { return size_ > kInlineBits ? words_.data() : inline_words_; }
  const uint64_t* data() const { return size_ > kInlineBits ? words_.data() : inline_words_; }

  int32_t size_ = 0;
  int32_t count_ = 0;
  uint64_t inline_words_[kInlineBits / 64] = {};
  std::vector<uint64_t> words_;  // beyond kInlineBits
};

}  // namespace cerebro
