// CUDA sddmm, laid out like the aggregation kernels (spmm.cu): one warp per row, its lanes
// splitting the feature dimension of each of the row's dot products, then reducing it.
#include "aggregate/cuda/warp_rows.cuh"
#include "aggregate/sddmm.h"
#include "common/cuda_utils.cuh"

#include <ATen/OpMathType.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

template <typename scalar_t, typename index_t>
__global__ void sddmm_kernel(SddmmCall<scalar_t, index_t> call) {
  using acc_t = at::opmath_type<scalar_t>;
  const int lane = threadIdx.x;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= call.num_rows) return;
  const int64_t dim = call.dim;
  const scalar_t* a_row = call.a + row * dim;
  for (int64_t k = call.row_start[row]; k < call.row_start[row + 1]; ++k) {
    const scalar_t* b_row = call.b + static_cast<int64_t>(call.column[k]) * dim;
    acc_t dot = 0;
    for (int64_t f = lane; f < dim; f += kWarp) {
      dot += static_cast<acc_t>(a_row[f]) * static_cast<acc_t>(b_row[f]);
    }
    dot = warp_sum(dot);
    if (lane == 0) call.out[k] = static_cast<scalar_t>(dot);
  }
}

struct CudaSddmm {
  template <typename scalar_t, typename index_t>
  static void run(const SddmmCall<scalar_t, index_t>& call) {
    sddmm_kernel<<<warp_row_blocks(call.num_rows, 1), warp_row_threads(), 0,
                   fastgl::cuda::current_stream()>>>(call);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("sddmm", &sddmm_entry<CudaSddmm>); }

}  // namespace fastgl::aggregate
