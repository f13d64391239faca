// Fused-Map for a node set that grows hop by hop (sample_hops): every key gets a local id, the
// keys new to the set numbered in first-occurrence order after the ones already in it, in one
// sequential pass. The table lives as long as the set, so a hop looks up only its own keys.
#pragma once

#include "common/block_pool.h"
#include "idmap/cpu/sharded_table.h"

#include <cstdint>
#include <vector>

namespace fastgl::idmap {

class GrowingIdMap {
 public:
  using Keys = PooledVector<int64_t>;

  // Keys in local-id order.
  const Keys& keys() const { return keys_; }
  int64_t size() const { return static_cast<int64_t>(keys_.size()); }

  // Replaces ids[0 .. n) (keys >= 0) by their local ids, adding the new keys. Each key's table
  // slot is prefetched kPrefetchDistance keys ahead (its hash kept until then), so cache misses
  // overlap.
  void relabel(int64_t* ids, int64_t n) {
    uint64_t hash_ahead[kPrefetchDistance];
    for (int64_t j = 0; j < n && j < kPrefetchDistance; ++j) hash_ahead[j] = look_ahead(ids[j]);
    for (int64_t j = 0; j < n; ++j) {
      uint64_t& ring = hash_ahead[j % kPrefetchDistance];
      const uint64_t hash = ring;
      if (j + kPrefetchDistance < n) ring = look_ahead(ids[j + kPrefetchDistance]);
      const int64_t next = size();
      const int64_t local = table_.find_or_insert(ids[j], hash, next);
      if (local == next) keys_.push_back(ids[j]);
      ids[j] = local;
    }
  }

 private:
  // Enough lookups in flight to hide a miss, few enough that the lines are still there.
  static constexpr int64_t kPrefetchDistance = 16;

  uint64_t look_ahead(int64_t key) const {
    const uint64_t hash = hash_id(key);
    table_.prefetch(hash);
    return hash;
  }

  IdTable table_{0};
  Keys keys_;
};

}  // namespace fastgl::idmap
