// Fused-Map's hash table probes (FastGL, ASPLOS '24, §4.3), for host and device: open
// addressing with linear probing, keys claimed by compare-and-swap, and per slot the smallest
// position that carried the key, so "first occurrence" does not depend on thread timing. The
// CUDA kernels and their host harness share these functions (common/portable_atomics.h).
#pragma once

#include "common/portable_atomics.h"
#include "idmap/id_map.h"

#include <cstdint>

namespace fastgl::idmap {

struct TableView {
  int64_t* keys;   // kEmptyKey when free
  int64_t* first;  // smallest position holding the key, kNoPosition before any
  uint64_t mask;   // capacity - 1 (a power of two)
};

constexpr int64_t kNoSlot = -1;

// The slot holding `key` (>= 0), claimed if the key is new; kNoSlot when the table is full. The
// probe is bounded by the capacity, so an undersized table is an error, never a hang.
C10_HOST_DEVICE inline int64_t find_or_insert_slot(TableView table, int64_t key) {
  uint64_t slot = hash_id(key) & table.mask;
  for (uint64_t probes = 0; probes <= table.mask; ++probes, slot = (slot + 1) & table.mask) {
    // A slot goes from empty to a key once and never changes again, so a plain read that sees
    // the key is final; repeated keys (the common case) then skip the atomic.
    const int64_t current = atomic_read(table.keys + slot);
    if (current == key) return static_cast<int64_t>(slot);
    if (current != kEmptyKey) continue;
    const int64_t seen = atomic_compare_swap(table.keys + slot, kEmptyKey, key);
    if (seen == kEmptyKey || seen == key) return static_cast<int64_t>(slot);
  }
  return kNoSlot;
}

// Records `position` for the key in `slot` when it is the smallest so far. The plain pre-read
// is a benign race: values only decrease, so a stale read only costs an unneeded atomic.
C10_HOST_DEVICE inline void claim_position(TableView table, int64_t slot, int64_t position) {
  if (atomic_read(table.first + slot) > position) atomic_lower(table.first + slot, position);
}

}  // namespace fastgl::idmap
