// CUDA max-aggregation backward ops (see spmm_max_backward.h), laid out like the forward: one
// warp per row (a source for x, a destination row for the edge weights), lanes along the
// features, so arg and grad rows are read coalesced; every output entry has one owner.
#include "aggregate/cuda/warp_rows.cuh"
#include "aggregate/spmm_max_backward.h"
#include "common/cuda_utils.cuh"

#include <ATen/OpMathType.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

using fastgl::cuda::current_stream;

template <typename scalar_t, typename index_t>
__global__ void max_backward_x_kernel(MaxBackwardXCall<scalar_t, index_t> call) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t s = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (s >= call.num_src) return;
  const int64_t dim = call.dim;
  for (int64_t f = static_cast<int64_t>(blockIdx.y) * kWarp + threadIdx.x; f < dim;
       f += static_cast<int64_t>(gridDim.y) * kWarp) {
    acc_t acc = 0;
    for (int64_t j = call.t_start[s]; j < call.t_start[s + 1]; ++j) {
      const int64_t r = static_cast<int64_t>(call.t_rows[j]), e = call.t_slots[j];
      if (call.winner[r * dim + f] == e) {
        acc += (call.weight ? static_cast<acc_t>(call.weight[e]) : acc_t(1)) *
               static_cast<acc_t>(call.grad[r * dim + f]);
      }
    }
    call.grad_x[s * dim + f] = static_cast<scalar_t>(acc);
  }
}

// Per edge of the row, the lanes sum the terms of the features it won, then reduce.
template <typename scalar_t, typename index_t>
__global__ void max_backward_weight_kernel(MaxBackwardWeightCall<scalar_t, index_t> call) {
  using acc_t = at::opmath_type<scalar_t>;
  const int lane = threadIdx.x;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (r >= call.num_rows) return;
  const int64_t dim = call.dim;
  for (int64_t e = call.row_start[r]; e < call.row_start[r + 1]; ++e) {
    const int64_t source = static_cast<int64_t>(call.column[e]);
    acc_t sum = 0;
    for (int64_t f = lane; f < dim; f += kWarp) {
      if (call.winner[r * dim + f] == e) {
        sum += static_cast<acc_t>(call.grad[r * dim + f]) *
               static_cast<acc_t>(call.x[source * dim + f]);
      }
    }
    sum = warp_sum(sum);
    if (lane == 0) call.grad_weight[e] = static_cast<scalar_t>(sum);
  }
}

struct CudaSpmmMaxBackward {
  template <typename scalar_t, typename index_t>
  static void grad_x(const MaxBackwardXCall<scalar_t, index_t>& call) {
    max_backward_x_kernel<<<warp_row_blocks(call.num_src, call.dim), warp_row_threads(), 0,
                            current_stream()>>>(call);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  template <typename scalar_t, typename index_t>
  static void grad_weight(const MaxBackwardWeightCall<scalar_t, index_t>& call) {
    max_backward_weight_kernel<<<warp_row_blocks(call.num_rows, 1), warp_row_threads(), 0,
                                 current_stream()>>>(call);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("spmm_max_backward_x", &spmm_max_backward_x_entry<CudaSpmmMaxBackward>);
  m.impl("spmm_max_backward_weight", &spmm_max_backward_weight_entry<CudaSpmmMaxBackward>);
}

}  // namespace fastgl::aggregate
