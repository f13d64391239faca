// CUDA id_map: FastGL's Fused-Map. Keys are inserted into one hash table with atomicCAS, each
// slot keeping the smallest position that carried its key (atomicMin), so the first occurrence
// claims the local id and the order is deterministic (FastGL's own version claims ids with a
// counter and its order depends on thread timing). No unique + sort + search passes, and one
// synchronization per call: the error flags and the number of new ids come back together.
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
      if (slot_of) slot_of[i] = kNoSlot;
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

// A negative id has no slot (kNoSlot): it is no first occurrence and gets no local id, and the
// call raises kNegativeIdError once its one read-back has the flags.
__global__ void mark_first_occurrence_kernel(DeviceTable table, const int64_t* slot_of, int64_t n,
                                             int64_t num_prefix, bool* is_first) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) {
    const int64_t slot = slot_of[i];
    is_first[i] = slot != kNoSlot && table.first[slot] == num_prefix + i;
  }
}

// rank[j] = number of first occurrences among ids[0..j] (inclusive scan of is_first). Each first
// occurrence also writes its id to the new ids, at its rank.
__global__ void assign_local_ids_kernel(DeviceTable table, const int64_t* ids,
                                        const int64_t* slot_of, int64_t n, int64_t num_prefix,
                                        const int64_t* rank, int64_t* local, int64_t* new_ids) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) {
    const int64_t slot = slot_of[i];
    if (slot == kNoSlot) {
      local[i] = -1;
      continue;
    }
    const int64_t first = table.first[slot];
    local[i] = first < num_prefix ? first : num_prefix + rank[first - num_prefix] - 1;
    if (first == num_prefix + i) new_ids[rank[i] - 1] = ids[i];
  }
}

// The call's one synchronization: the error flags and the number of new ids, in one copy.
int64_t read_new_id_count(const at::Tensor& error_flags, const at::Tensor& rank) {
  const at::Tensor parts = rank.numel() == 0
                               ? error_flags.to(at::kLong)
                               : at::cat({error_flags.to(at::kLong), rank.narrow(0, -1, 1)});
  const at::Tensor host = parts.cpu();
  const int64_t flags = host.data_ptr<int64_t>()[0];
  FASTGL_CHECK(!(flags & kNegativeIdFlag), "id_map", kNegativeIdError);
  FASTGL_CHECK(!(flags & kDuplicatePrefixFlag), "id_map", kDuplicatePrefixError);
  return rank.numel() == 0 ? 0 : host.data_ptr<int64_t>()[1];
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
  insert_keys(table, ids64.data_ptr<int64_t>(), num_ids, num_prefix, false,
              slot_of.data_ptr<int64_t>(), error_flags.data_ptr<int>());
  at::Tensor local = at::empty({num_ids}, options);
  at::Tensor rank = at::empty({0}, options);
  if (num_ids > 0) {
    at::Tensor is_first = at::empty({num_ids}, options.dtype(at::kBool));
    mark_first_occurrence_kernel<<<blocks_for(num_ids), kThreadsPerBlock, 0, stream>>>(
        table, slot_of.data_ptr<int64_t>(), num_ids, num_prefix, is_first.data_ptr<bool>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    rank = at::cumsum(is_first, 0, at::kLong);
  }
  // New ids number at most num_ids: the output is written at full size and cut to the count the
  // one read-back brings, so no pass waits for it.
  at::Tensor new_ids = at::empty({num_ids}, options);
  if (num_ids > 0) {
    assign_local_ids_kernel<<<blocks_for(num_ids), kThreadsPerBlock, 0, stream>>>(
        table, ids64.data_ptr<int64_t>(), slot_of.data_ptr<int64_t>(), num_ids, num_prefix,
        rank.data_ptr<int64_t>(), local.data_ptr<int64_t>(), new_ids.data_ptr<int64_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return {new_ids.narrow(0, 0, read_new_id_count(error_flags, rank)), local};
}

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("id_map", &id_map_entry<CudaIdMap>); }

}  // namespace fastgl::idmap
