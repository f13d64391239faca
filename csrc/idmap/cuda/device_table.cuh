// The device hash table of Fused-Map, shared by the CUDA kernels that map node ids (id_map,
// match): open addressing with linear probing, keys claimed with atomicCAS, and per slot the
// smallest position that carried the key (atomicMin), so "first occurrence" is deterministic.
#pragma once

#include "common/cuda_utils.cuh"
#include "idmap/id_map.h"

namespace fastgl::idmap {

struct DeviceTable {
  unsigned long long* keys;  // kEmptyKey when free
  long long* first;          // smallest position holding the key, kNoPosition before any
  uint64_t mask;
};

// Owns the table's memory; `view()` is what kernels take.
struct DeviceTableStorage {
  at::Tensor keys, first;

  DeviceTableStorage(int64_t num_keys, const at::TensorOptions& options)
      : keys(at::full({table_capacity(num_keys)}, kEmptyKey, options.dtype(at::kLong))),
        first(at::full({table_capacity(num_keys)}, kNoPosition, options.dtype(at::kLong))) {}

  DeviceTable view() const {
    return {reinterpret_cast<unsigned long long*>(keys.data_ptr<int64_t>()),
            reinterpret_cast<long long*>(first.data_ptr<int64_t>()),
            static_cast<uint64_t>(keys.numel() - 1)};
  }
};

__device__ inline uint64_t find_or_insert_slot(DeviceTable table, int64_t key) {
  const auto wanted = static_cast<unsigned long long>(key);
  const auto empty = static_cast<unsigned long long>(kEmptyKey);
  for (uint64_t slot = hash_id(key) & table.mask;; slot = (slot + 1) & table.mask) {
    // A slot goes from empty to a key once and never changes again, so a plain read that sees
    // the key is final; repeated keys (the common case) then skip the atomic.
    const unsigned long long current = table.keys[slot];
    if (current == wanted) return slot;
    if (current != empty) continue;
    const unsigned long long seen = atomicCAS(&table.keys[slot], empty, wanted);
    if (seen == empty || seen == wanted) return slot;
  }
}

// Position recorded for `key`, or -1 when it is not in the (fully built) table.
__device__ inline int64_t find_position(DeviceTable table, int64_t key) {
  const auto wanted = static_cast<unsigned long long>(key);
  const auto empty = static_cast<unsigned long long>(kEmptyKey);
  for (uint64_t slot = hash_id(key) & table.mask;; slot = (slot + 1) & table.mask) {
    const unsigned long long current = table.keys[slot];
    if (current == wanted) return table.first[slot];
    if (current == empty) return -1;
  }
}

constexpr int kNegativeIdFlag = 1;
constexpr int kDuplicatePrefixFlag = 2;

// Inserts keys[i] with position offset + i on the current stream. Distinct keys
// (`keys_are_distinct`) flag kDuplicatePrefixFlag on a repeat; negative keys flag
// kNegativeIdFlag and are skipped. Records each key's slot in slot_of when it is not null.
void insert_keys(DeviceTable table, const int64_t* keys, int64_t n, int64_t offset,
                 bool keys_are_distinct, int64_t* slot_of, int* error_flags);

}  // namespace fastgl::idmap
