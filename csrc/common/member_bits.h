// A set of ids in [0, num_ids), a bit each (ids are not checked): a membership test is one read
// of a word, and the whole array (a few hundred KiB for millions of ids) stays in cache, where a
// node-based hash set (std::unordered_set) costs a probe and an allocation per id. Callers clear
// the ids they set, so one array serves set after set.
#pragma once

#include <cstdint>
#include <vector>

namespace fastgl {

class MemberBits {
 public:
  explicit MemberBits(int64_t num_ids) : words_((num_ids + 63) / 64, 0) {}
  void set(int64_t id) { words_[id >> 6] |= uint64_t{1} << (id & 63); }
  void clear(int64_t id) { words_[id >> 6] &= ~(uint64_t{1} << (id & 63)); }
  bool has(int64_t id) const { return (words_[id >> 6] >> (id & 63)) & 1; }
  const uint64_t* words() const { return words_.data(); }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace fastgl
