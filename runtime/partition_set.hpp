#pragma once
// PartitionSet: a fixed-size set of partitions 0 .. size-1 as a bitset, with
// its element count. MopBook keeps each config's pending partitions in one, so
// starting, requeueing and resetting units cost O(1) or O(size / 64), and a
// simulator can intersect two sets a word at a time.

#include <cstdint>
#include <vector>

#include "runtime/ids.hpp"

namespace cerebro {

class PartitionSet {
 public:
  PartitionSet() = default;
  explicit PartitionSet(int32_t size) : size_(size), words_((size + 63) / 64, 0) {}

  int32_t size() const { return size_; }  // the universe 0 .. size-1
  int32_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

  bool contains(PartitionId p) const { return (words_[p >> 6] >> (p & 63)) & 1u; }
  // Both return whether the set changed.
  bool insert(PartitionId p) {
    uint64_t bit = uint64_t{1} << (p & 63);
    if (words_[p >> 6] & bit) return false;
    words_[p >> 6] |= bit;
    ++count_;
    return true;
  }
  bool erase(PartitionId p) {
    uint64_t bit = uint64_t{1} << (p & 63);
    if (!(words_[p >> 6] & bit)) return false;
    words_[p >> 6] &= ~bit;
    --count_;
    return true;
  }
  void fill() {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] = ~uint64_t{0};
    if (size_ & 63) words_.back() = (uint64_t{1} << (size_ & 63)) - 1;
    count_ = size_;
  }
  void clear() {
    for (auto& word : words_) word = 0;
    count_ = 0;
  }

  // Calls f(p) for every element, ascending.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      for (uint64_t word = words_[i]; word; word &= word - 1) {
        f(static_cast<PartitionId>(i * 64 + __builtin_ctzll(word)));
      }
    }
  }
  // Calls f(p) for every element also in `other` (same size), ascending.
  template <typename F>
  void for_each_common(const PartitionSet& other, F&& f) const {
    for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) {
      for (uint64_t word = words_[i] & other.words_[i]; word; word &= word - 1) {
        f(static_cast<PartitionId>(i * 64 + __builtin_ctzll(word)));
      }
    }
  }
  // Calls f(p) for the elements also in `other`, ascending, until f returns
  // true; returns whether it did. f may change either set: each word is read
  // once, before its elements are visited.
  template <typename F>
  bool any_common(const PartitionSet& other, F&& f) const {
    for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) {
      for (uint64_t word = words_[i] & other.words_[i]; word; word &= word - 1) {
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
  int32_t size_ = 0;
  int32_t count_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace cerebro
