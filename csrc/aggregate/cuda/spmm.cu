// CUDA spmm, spmm_max and es_spmm, after FastGL's Memory-Aware aggregation (ASPLOS '24, §4.2): a
// thread block owns kRowsPerBlock rows (destination nodes) x 32 feature columns, one warp per
// row. The warp stages a tile of its row's edges (source ids and weights) in shared memory once,
// then every lane reads the source rows coalesced along the feature dimension and accumulates in
// a register in the op-math type (fp32 for fp16/bf16). No assumption on degrees: rows of any
// length are walked tile by tile (FastGL's kernel assumes degree <= fanout). ES-SpMM's
// cache-first sampling (Lin et al., §IV) is the same kernel reading only the picked edges: with
// width <= 32 a row's whole sample sits in shared memory as one tile.
#include "aggregate/cuda/warp_rows.cuh"
#include "aggregate/spmm.h"
#include "common/cuda_utils.cuh"

#include <ATen/OpMathType.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

using fastgl::cuda::current_stream;

// Row r reduces the edges the call's selector picks from it, in slot order; the winning slot per
// feature (for max) is written when the call asks for it.
template <template <typename> class Reducer, typename scalar_t, typename index_t, typename Selector>
__global__ void spmm_kernel(SpmmCall<scalar_t, index_t, Selector> call) {
  using acc_t = at::opmath_type<scalar_t>;
  __shared__ int64_t tile_column[kRowsPerBlock][kWarp];
  __shared__ acc_t tile_weight[kRowsPerBlock][kWarp];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + warp;
  if (row >= call.num_rows) return;  // a whole warp leaves together: no __syncwarp is skipped
  const int64_t dim = call.dim;
  const int64_t first = call.row_start[row], degree = call.row_start[row + 1] - first;
  const int64_t num_slots = call.selector.count(degree);
  for (int64_t f0 = static_cast<int64_t>(blockIdx.y) * kWarp; f0 < dim;
       f0 += static_cast<int64_t>(gridDim.y) * kWarp) {
    const int64_t f = f0 + lane;
    Reducer<acc_t> acc;
    for (int64_t tile = 0; tile < num_slots; tile += kWarp) {
      if (tile + lane < num_slots) {  // the warp stages the next kWarp picked edges together
        const int64_t k = first + call.selector.edge(tile + lane, degree);
        tile_column[warp][lane] = static_cast<int64_t>(call.column[k]);
        tile_weight[warp][lane] = call.weight ? static_cast<acc_t>(call.weight[k]) : acc_t(1);
      }
      __syncwarp();
      const int count = static_cast<int>(num_slots - tile < kWarp ? num_slots - tile : kWarp);
      if (f < dim) {
        for (int j = 0; j < count; ++j) {
          acc.add(tile_weight[warp][j] * static_cast<acc_t>(call.x[tile_column[warp][j] * dim + f]),
                  first + call.selector.edge(tile + j, degree));
        }
      }
      __syncwarp();  // the tile is read before the next one overwrites it
    }
    if (f < dim) {
      call.out[row * dim + f] = static_cast<scalar_t>(acc.result());
      if (call.arg_out) call.arg_out[row * dim + f] = acc.arg();
    }
  }
}

struct CudaSpmm {
  template <template <typename> class Reducer, typename scalar_t, typename index_t,
            typename Selector>
  static void run(const SpmmCall<scalar_t, index_t, Selector>& call) {
    spmm_kernel<Reducer>
        <<<warp_row_blocks(call.num_rows, call.dim), warp_row_threads(), 0, current_stream()>>>(
            call);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("spmm", &spmm_entry<CudaSpmm>);
  m.impl("spmm_max", &spmm_max_entry<CudaSpmm>);
  m.impl("es_spmm", &es_spmm_entry<CudaSpmm>);
}

}  // namespace fastgl::aggregate
