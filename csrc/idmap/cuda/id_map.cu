// CUDA id_map: FastGL's Fused-Map. Keys are inserted into one hash table with atomicCAS, each
// slot keeping the smallest position that carried its key (atomicMin), so the first occurrence
// claims the local id and the order is deterministic (FastGL's own version claims ids with a
// counter and its order depends on thread timing). No unique + sort + search passes.
#include "idmap/cuda/device_table.cuh"

#include <torch/library.h>

namespace fastgl::idmap {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

// Inserts keys[i] with position offset + i; records the slot for later passes when asked.
__global__ void insert_kernel(DeviceTable table, const int64_t* keys, int64_t n, int64_t offset,
                              bool keys_are_distinct, int64_t* slot_of, int* error_flags) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) {
    const int64_t key = keys[i];
    if (key < 0) {
      atomicOr(error_flags, kNegativeIdFlag);
      continue;
    }
    const int64_t slot = find_or_insert_slot(table, key);  // never kNoSlot: see insert_keys
    const int64_t position = offset + i;
    if (keys_are_distinct) {
      if (atomic_lower(table.first + slot, position) != kNoPosition) {
        atomicOr(error_flags, kDuplicatePrefixFlag);
      }
    } else {
      claim_position(table, slot, position);
    }
    if (slot_of) slot_of[i] = slot;
  }
}

__global__ void mark_first_occurrence_kernel(DeviceTable table, const int64_t* slot_of, int64_t n,
                                             int64_t num_prefix, bool* is_first) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) {
    is_first[i] = table.first[slot_of[i]] == num_prefix + i;
  }
}

// rank[j] = number of first occurrences among ids[0..j] (inclusive scan of is_first).
__global__ void assign_local_ids_kernel(DeviceTable table, const int64_t* slot_of, int64_t n,
                                        int64_t num_prefix, const int64_t* rank, int64_t* local) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) {
    const int64_t first = table.first[slot_of[i]];
    local[i] = first < num_prefix ? first : num_prefix + rank[first - num_prefix] - 1;
  }
}

void raise_on_error_flags(const at::Tensor& error_flags) {
  const int flags = error_flags.item<int>();
  FASTGL_CHECK(!(flags & kNegativeIdFlag), "id_map", kNegativeIdError);
  FASTGL_CHECK(!(flags & kDuplicatePrefixFlag), "id_map", kDuplicatePrefixError);
}

}  // namespace

void insert_keys(DeviceTable table, const int64_t* keys, int64_t n, int64_t offset,
                 bool keys_are_distinct, int64_t* slot_of, int* error_flags) {
  if (n == 0) return;
  insert_kernel<<<blocks_for(n), kThreadsPerBlock, 0, fastgl::cuda::current_stream()>>>(
      table, keys, n, offset, keys_are_distinct, slot_of, error_flags);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

std::tuple<at::Tensor, at::Tensor> CudaIdMap::run(const at::Tensor& prefix64,
                                                  const at::Tensor& ids64) {
  const int64_t num_prefix = prefix64.numel(), num_ids = ids64.numel();
  const auto options = ids64.options();
  const cudaStream_t stream = fastgl::cuda::current_stream();

  const DeviceTableStorage storage(num_prefix + num_ids, options);
  const DeviceTable table = storage.view();
  at::Tensor slot_of = at::empty({num_ids}, options);
  at::Tensor error_flags = at::zeros({1}, options.dtype(at::kInt));
  insert_keys(table, prefix64.data_ptr<int64_t>(), num_prefix, 0, true, nullptr,
              error_flags.data_ptr<int>());
  at::Tensor is_first = at::empty({num_ids}, options.dtype(at::kBool));
  at::Tensor local = at::empty({num_ids}, options);
  insert_keys(table, ids64.data_ptr<int64_t>(), num_ids, num_prefix, false,
              slot_of.data_ptr<int64_t>(), error_flags.data_ptr<int>());
  // Before any pass reads slot_of: a rejected (negative) id has no slot.
  raise_on_error_flags(error_flags);
  if (num_ids > 0) {
    mark_first_occurrence_kernel<<<blocks_for(num_ids), kThreadsPerBlock, 0, stream>>>(
        table, slot_of.data_ptr<int64_t>(), num_ids, num_prefix, is_first.data_ptr<bool>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const at::Tensor rank = at::cumsum(is_first, 0, at::kLong);
    assign_local_ids_kernel<<<blocks_for(num_ids), kThreadsPerBlock, 0, stream>>>(
        table, slot_of.data_ptr<int64_t>(), num_ids, num_prefix, rank.data_ptr<int64_t>(),
        local.data_ptr<int64_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return {is_first, local};
}

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("id_map", &id_map_entry<CudaIdMap>); }

}  // namespace fastgl::idmap
