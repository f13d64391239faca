// The device hash table of Fused-Map, shared by the CUDA kernels that map node ids (id_map,
// match, sample_hops): the probes of idmap/table_probe.h over device memory.
#pragma once

#include "common/cuda_utils.cuh"
#include "idmap/table_probe.h"

namespace fastgl::idmap {

using DeviceTable = TableView;

// Owns the table's memory; `view()` is what kernels take.
struct DeviceTableStorage {
  at::Tensor keys, first;

  DeviceTableStorage(int64_t num_keys, const at::TensorOptions& options)
      : keys(at::full({table_capacity(num_keys)}, kEmptyKey, options.dtype(at::kLong))),
        first(at::full({table_capacity(num_keys)}, kNoPosition, options.dtype(at::kLong))) {}

  DeviceTable view() const {
    return {keys.data_ptr<int64_t>(), first.data_ptr<int64_t>(),
            static_cast<uint64_t>(keys.numel() - 1)};
  }
};

// Position recorded for `key`, or -1 when it is not in the (fully built) table.
__device__ inline int64_t find_position(DeviceTable table, int64_t key) {
  uint64_t slot = hash_id(key) & table.mask;
  for (uint64_t probes = 0; probes <= table.mask; ++probes, slot = (slot + 1) & table.mask) {
    const int64_t current = table.keys[slot];
    if (current == key) return table.first[slot];
    if (current == kEmptyKey) return -1;
  }
  return -1;
}

constexpr int kNegativeIdFlag = 1;
constexpr int kDuplicatePrefixFlag = 2;

// Inserts keys[i] with position offset + i on the current stream. Distinct keys
// (`keys_are_distinct`) flag kDuplicatePrefixFlag on a repeat; negative keys flag
// kNegativeIdFlag and are skipped. Records each key's slot in slot_of when it is not null.
// The table holds at least twice as many slots as keys (table_capacity), so it never fills.
void insert_keys(DeviceTable table, const int64_t* keys, int64_t n, int64_t offset,
                 bool keys_are_distinct, int64_t* slot_of, int* error_flags);

}  // namespace fastgl::idmap
