// CUDA csc_from_coo: a stable radix sort of the edges by target (at::sort, stable=true) gives
// the same slot order as the CPU counting sort. Nothing reads the device: the targets are
// counted by a kernel of atomic increments (at::bincount reads the largest target back to size
// its output), so transposing a checked structure (aggregation's backward pass) never waits.
#include "common/cuda_utils.cuh"
#include "graph/csc_from_coo.h"

#include <torch/library.h>

#include <tuple>

namespace fastgl::graph {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

// counts[v] += the edges targeting v (counts zeroed). The targets were checked, or are known
// checked; one changed behind torch's back is skipped rather than written out of bounds.
__global__ void count_targets_kernel(const int64_t* target, int64_t num_edges, int64_t num_nodes,
                                     int64_t* counts) {
  for (int64_t e = global_thread_index(); e < num_edges; e += global_thread_stride()) {
    const int64_t v = target[e];
    if (0 <= v && v < num_nodes) atomicAdd(reinterpret_cast<unsigned long long*>(counts + v), 1ULL);
  }
}

at::Tensor count_targets(const at::Tensor& target, int64_t num_nodes) {
  at::Tensor counts = at::zeros({num_nodes}, target.options());
  const int64_t num_edges = target.numel();
  if (num_edges == 0) return counts;
  count_targets_kernel<<<blocks_for(num_edges), kThreadsPerBlock, 0,
                         fastgl::cuda::current_stream()>>>(target.data_ptr<int64_t>(), num_edges,
                                                           num_nodes, counts.data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return counts;
}

// Slot order -> CSC arrays.
CscArrays csc_from_permutation(const at::Tensor& src, const at::Tensor& counts,
                               const at::Tensor& perm) {
  at::Tensor indptr = at::zeros({counts.numel() + 1}, counts.options().dtype(at::kLong));
  indptr.narrow(0, 1, counts.numel()).copy_(at::cumsum(counts, 0));
  return {indptr, src.index_select(0, perm), perm};
}

struct CudaCscFromCoo {
  static CscArrays run(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes) {
    const at::Tensor target = dst.to(at::kLong);
    // c10::optional<bool>: a plain `true` would pick the (dim, descending) overload instead.
    const at::Tensor perm =
        std::get<1>(at::sort(target, c10::optional<bool>(true), /*dim=*/0, /*descending=*/false));
    const at::Tensor counts = count_targets(target, num_nodes);
    return csc_from_permutation(src, counts, perm);
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("csc_from_coo", &csc_from_coo_entry<CudaCscFromCoo>); }

}  // namespace fastgl::graph
