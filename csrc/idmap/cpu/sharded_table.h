// Cache-conscious hash tables for the CPU kernels that map node ids (id_map, match). Keys are
// partitioned by hash into shards small enough that a shard's table stays in cache (a stable
// partition: within a shard, keys keep input order). Threads then work on whole shards with
// private tables: no atomics, and "first occurrence" means the same as in a sequential scan.
#pragma once

#include "common/block_pool.h"
#include "idmap/id_map.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fastgl::idmap {

constexpr int64_t kKeysPerShard = 1 << 14;  // table of 32K slots x 16 bytes: fits in L2
constexpr int64_t kShardGrain = 1 << 14;

// Open addressing, linear probing; a slot holds a key and the first position recorded for it.
// The table doubles when it gets over half full, so it may start small. Large tables come from
// the block pool (common/block_pool.h): a table as big as the last call's costs no page faults.
class IdTable {
 public:
  explicit IdTable(int64_t num_keys)
      : mask_(table_capacity(num_keys) - 1), slots_(mask_ + 1, Slot{kEmptyKey, 0}) {}

  // First position recorded for `key`, recording `position` when the key is new.
  int64_t find_or_insert(int64_t key, uint64_t hash, int64_t position) {
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return slot.first;
      if (slot.key == kEmptyKey) {
        slot = Slot{key, position};
        if (2 * ++size_ > static_cast<int64_t>(mask_ + 1)) grow();
        return position;
      }
    }
  }

  // Position recorded for `key`, or -1 when it was never inserted.
  int64_t find(int64_t key, uint64_t hash) const {
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.key == key) return slot.first;
      if (slot.key == kEmptyKey) return -1;
    }
  }

  // Starts loading the slot a later lookup of `hash` will probe first.
  void prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

 private:
  struct Slot {  // key and position side by side: one cache line per probe
    int64_t key, first;
  };

  void grow() {
    Slots old(2 * (mask_ + 1), Slot{kEmptyKey, 0});
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.key == kEmptyKey) continue;
      uint64_t i = hash_id(slot.key) & mask_;
      while (slots_[i].key != kEmptyKey) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  using Slots = PooledVector<Slot>;

  uint64_t mask_;
  Slots slots_;
  int64_t size_ = 0;
};

// The keys of prefix and ids as one sequence: position p < P is prefix[p], else ids[p - P].
struct KeySequence {
  const int64_t* prefix;
  int64_t num_prefix;
  const int64_t* ids;
  int64_t num_ids;

  int64_t size() const { return num_prefix + num_ids; }
  int64_t at(int64_t p) const { return p < num_prefix ? prefix[p] : ids[p - num_prefix]; }
};

struct Partition {
  std::vector<int64_t> shard_start;  // shard s holds positions[shard_start[s] .. [s+1])
  std::vector<int64_t> positions;    // key positions grouped by shard, in input order within
};

// Smallest power of two of shards that keeps each near kKeysPerShard keys.
inline int64_t num_shards_for(int64_t num_keys) {
  int64_t num_shards = 1;
  while (num_shards * kKeysPerShard < num_keys) num_shards <<= 1;
  return num_shards;
}

// Top hash bits pick the shard; the tables use the low bits, so the two stay independent.
inline int64_t shard_of(uint64_t hash, int64_t num_shards) {
  return static_cast<int64_t>((hash >> 40) & static_cast<uint64_t>(num_shards - 1));
}

// Stable counting-sort partition: each input chunk counts its keys per shard, then scatters
// them behind the counts of the chunks before it.
inline Partition partition_by_shard(const KeySequence& keys, int64_t num_shards) {
  const int64_t n = keys.size();
  const int64_t num_chunks =
      std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / kShardGrain));
  const int64_t chunk = (n + num_chunks - 1) / num_chunks;
  std::vector<int64_t> offset(num_chunks * num_shards, 0);  // [chunk][shard]
  at::parallel_for(0, num_chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p) {
        ++offset[c * num_shards + shard_of(hash_id(keys.at(p)), num_shards)];
      }
    }
  });
  Partition part{std::vector<int64_t>(num_shards + 1, 0), std::vector<int64_t>(n)};
  int64_t running = 0;
  for (int64_t s = 0; s < num_shards; ++s) {
    part.shard_start[s] = running;
    for (int64_t c = 0; c < num_chunks; ++c) {
      const int64_t count = offset[c * num_shards + s];
      offset[c * num_shards + s] = running;
      running += count;
    }
  }
  part.shard_start[num_shards] = running;
  at::parallel_for(0, num_chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p) {
        part.positions[offset[c * num_shards + shard_of(hash_id(keys.at(p)), num_shards)]++] = p;
      }
    }
  });
  return part;
}

}  // namespace fastgl::idmap
