// CUDA match and overlap_counts on Fused-Map's device table (idmap/cuda/device_table.cuh).
#include "idmap/cuda/device_table.cuh"
#include "match/match.h"

#include <torch/library.h>

namespace fastgl::match {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;
using idmap::DeviceTable;

__global__ void find_positions_kernel(DeviceTable table, const int64_t* next, int64_t n,
                                      int64_t* position, int* error_flags) {
  for (int64_t j = global_thread_index(); j < n; j += global_thread_stride()) {
    const int64_t key = next[j];
    if (key < 0) {
      atomicOr(error_flags, idmap::kNegativeIdFlag);
      position[j] = -1;
    } else {
      position[j] = idmap::find_position(table, key);
    }
  }
}

void raise_on_match_flags(const at::Tensor& error_flags) {
  const int flags = error_flags.item<int>();
  FASTGL_CHECK(!(flags & idmap::kNegativeIdFlag), "match", kNegativeIdError);
  FASTGL_CHECK(!(flags & idmap::kDuplicatePrefixFlag), "match", kDuplicatePrevError);
}

struct CudaMatch {
  static at::Tensor match(const at::Tensor& prev, const at::Tensor& next);
  static at::Tensor overlap_counts(const at::Tensor& nodes64, const at::Tensor& offsets,
                                   int64_t num_sets);
};

at::Tensor CudaMatch::match(const at::Tensor& prev, const at::Tensor& next) {
  const idmap::DeviceTableStorage storage(prev.numel(), prev.options());
  at::Tensor error_flags = at::zeros({1}, prev.options().dtype(at::kInt));
  idmap::insert_keys(storage.view(), prev.data_ptr<int64_t>(), prev.numel(), 0, true, nullptr,
                     error_flags.data_ptr<int>());
  at::Tensor position = at::empty({next.numel()}, next.options());
  if (next.numel() > 0) {
    find_positions_kernel<<<blocks_for(next.numel()), kThreadsPerBlock, 0,
                            fastgl::cuda::current_stream()>>>(
        storage.view(), next.data_ptr<int64_t>(), next.numel(), position.data_ptr<int64_t>(),
        error_flags.data_ptr<int>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  raise_on_match_flags(error_flags);
  return position;
}

constexpr int kDuplicateInSetFlag = 1;

__global__ void mark_membership_kernel(const int64_t* local, const int64_t* set_of, int64_t n,
                                       unsigned long long* masks, int* error_flags) {
  for (int64_t p = global_thread_index(); p < n; p += global_thread_stride()) {
    const unsigned long long bit = 1ULL << set_of[p];
    if (atomicOr(&masks[local[p]], bit) & bit) atomicOr(error_flags, kDuplicateInSetFlag);
  }
}

// Each block counts its nodes' set pairs in shared memory (num_sets^2 counters, at most 32 KB),
// then adds them to the global upper triangle: few global atomics, integer so deterministic.
__global__ void count_pairs_kernel(const unsigned long long* masks, int64_t n, int num_sets,
                                   unsigned long long* upper) {
  extern __shared__ unsigned long long block_counts[];
  const int cells = num_sets * num_sets;
  for (int k = threadIdx.x; k < cells; k += blockDim.x) block_counts[k] = 0;
  __syncthreads();
  for (int64_t u = global_thread_index(); u < n; u += global_thread_stride()) {
    for (unsigned long long rest = masks[u]; rest; rest &= rest - 1) {
      const int i = __ffsll(static_cast<long long>(rest)) - 1;
      for (unsigned long long later = rest; later; later &= later - 1) {
        atomicAdd(&block_counts[i * num_sets + __ffsll(static_cast<long long>(later)) - 1], 1ULL);
      }
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < cells; k += blockDim.x) {
    if (block_counts[k]) atomicAdd(&upper[k], block_counts[k]);
  }
}

at::Tensor CudaMatch::overlap_counts(const at::Tensor& nodes64, const at::Tensor& offsets,
                                     int64_t num_sets) {
  const auto [unique, local] =
      idmap::id_map_entry<idmap::CudaIdMap>(nodes64.new_empty({0}), nodes64);
  // dim 0, then output_size (the third argument is dim: passing the size there fails).
  const at::Tensor set_of = at::repeat_interleave(at::arange(num_sets, nodes64.options()),
                                                  offsets.diff(), 0, nodes64.numel());
  at::Tensor masks = at::zeros({unique.numel()}, nodes64.options());
  at::Tensor error_flags = at::zeros({1}, nodes64.options().dtype(at::kInt));
  const cudaStream_t stream = fastgl::cuda::current_stream();
  auto* mask_ptr = reinterpret_cast<unsigned long long*>(masks.data_ptr<int64_t>());
  mark_membership_kernel<<<blocks_for(nodes64.numel()), kThreadsPerBlock, 0, stream>>>(
      local.data_ptr<int64_t>(), set_of.data_ptr<int64_t>(), nodes64.numel(), mask_ptr,
      error_flags.data_ptr<int>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  FASTGL_CHECK(!(error_flags.item<int>() & kDuplicateInSetFlag), "overlap_counts",
               kDuplicateInSetError);
  at::Tensor upper = at::zeros({num_sets, num_sets}, nodes64.options());
  const size_t shared_bytes = num_sets * num_sets * sizeof(unsigned long long);
  // A few blocks per SM suffice; more would only add flushes of the shared counters.
  const int64_t blocks = std::min<int64_t>(blocks_for(unique.numel()), 1024);
  count_pairs_kernel<<<blocks, kThreadsPerBlock, shared_bytes, stream>>>(
      mask_ptr, unique.numel(), static_cast<int>(num_sets),
      reinterpret_cast<unsigned long long*>(upper.data_ptr<int64_t>()));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return upper;
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("match", &match_entry<CudaMatch>);
  m.impl("overlap_counts", &overlap_counts_entry<CudaMatch>);
}

}  // namespace fastgl::match
