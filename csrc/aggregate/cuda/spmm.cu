// CUDA spmm, es_spmm and sddmm, after FastGL's Memory-Aware aggregation (ASPLOS '24, §4.2): a
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

// Row r reduces the edges `selector` picks from it, in slot order; `arg_out` (the winning slot
// per feature, for max) is written when not null.
template <template <typename> class Reducer, typename Selector, typename scalar_t, typename index_t>
__global__ void spmm_kernel(const int64_t* row_start, const index_t* column, const scalar_t* weight,
                            const scalar_t* x, int64_t num_rows, int64_t dim, Selector selector,
                            scalar_t* out, int64_t* arg_out) {
  using acc_t = at::opmath_type<scalar_t>;
  __shared__ int64_t tile_column[kRowsPerBlock][kWarp];
  __shared__ acc_t tile_weight[kRowsPerBlock][kWarp];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + warp;
  if (row >= num_rows) return;  // a whole warp leaves together: no __syncwarp is skipped
  const int64_t first = row_start[row], degree = row_start[row + 1] - first;
  const int64_t num_slots = selector.count(degree);
  for (int64_t f0 = static_cast<int64_t>(blockIdx.y) * kWarp; f0 < dim;
       f0 += static_cast<int64_t>(gridDim.y) * kWarp) {
    const int64_t f = f0 + lane;
    Reducer<acc_t> acc;
    for (int64_t tile = 0; tile < num_slots; tile += kWarp) {
      if (tile + lane < num_slots) {  // the warp stages the next kWarp picked edges together
        const int64_t k = first + selector.edge(tile + lane, degree);
        tile_column[warp][lane] = static_cast<int64_t>(column[k]);
        tile_weight[warp][lane] = weight ? static_cast<acc_t>(weight[k]) : acc_t(1);
      }
      __syncwarp();
      const int count = static_cast<int>(num_slots - tile < kWarp ? num_slots - tile : kWarp);
      if (f < dim) {
        for (int j = 0; j < count; ++j) {
          acc.add(tile_weight[warp][j] * static_cast<acc_t>(x[tile_column[warp][j] * dim + f]),
                  first + selector.edge(tile + j, degree));
        }
      }
      __syncwarp();  // the tile is read before the next one overwrites it
    }
    if (f < dim) {
      out[row * dim + f] = static_cast<scalar_t>(acc.result());
      if (arg_out) arg_out[row * dim + f] = acc.arg();
    }
  }
}

// One warp per row: lanes split the feature dimension of each dot product, then reduce.
template <typename scalar_t, typename index_t>
__global__ void sddmm_kernel(const int64_t* row_start, const index_t* column, const scalar_t* a,
                             const scalar_t* b, int64_t num_rows, int64_t dim, scalar_t* out) {
  using acc_t = at::opmath_type<scalar_t>;
  const int lane = threadIdx.x;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= num_rows) return;
  const scalar_t* a_row = a + row * dim;
  for (int64_t k = row_start[row]; k < row_start[row + 1]; ++k) {
    const scalar_t* b_row = b + static_cast<int64_t>(column[k]) * dim;
    acc_t dot = 0;
    for (int64_t f = lane; f < dim; f += kWarp) {
      dot += static_cast<acc_t>(a_row[f]) * static_cast<acc_t>(b_row[f]);
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      dot += __shfl_down_sync(0xffffffffu, dot, offset);
    }
    if (lane == 0) out[k] = static_cast<scalar_t>(dot);
  }
}

struct CudaSpmm {
  template <template <typename> class Reducer, typename Selector>
  static at::Tensor run(const at::Tensor& indptr, const at::Tensor& indices,
                        const c10::optional<at::Tensor>& weight, const at::Tensor& x,
                        Selector selector, int64_t* arg_out);
};

template <template <typename> class Reducer, typename Selector>
at::Tensor CudaSpmm::run(const at::Tensor& indptr, const at::Tensor& indices,
                         const c10::optional<at::Tensor>& weight, const at::Tensor& x,
                         Selector selector, int64_t* arg_out) {
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor x_c = x.contiguous(), indptr_c = indptr.contiguous();
  const at::Tensor indices_c = indices.contiguous();
  const at::Tensor weight_c = weight.has_value() ? weight->contiguous() : at::Tensor();
  const int64_t num_rows = indptr.numel() - 1, dim = x.size(1);
  at::Tensor out = at::empty({num_rows, dim}, x.options());
  if (num_rows == 0 || dim == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "spmm_cuda", [&] {
    AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "spmm_cuda", [&] {
      const scalar_t* w = weight_c.defined() ? weight_c.data_ptr<scalar_t>() : nullptr;
      spmm_kernel<Reducer, Selector, scalar_t, index_t>
          <<<warp_row_blocks(num_rows, dim), warp_row_threads(), 0, current_stream()>>>(
              indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(), w,
              x_c.data_ptr<scalar_t>(), num_rows, dim, selector, out.data_ptr<scalar_t>(), arg_out);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  });
  return out;
}

}  // namespace

at::Tensor sddmm_cuda(const at::Tensor& indptr, const at::Tensor& indices, const at::Tensor& a,
                      const at::Tensor& b) {
  check_sddmm_inputs(indptr, indices, a, b);
  const c10::cuda::CUDAGuard device_guard(a.device());
  const at::Tensor a_c = a.contiguous(), b_c = b.contiguous(), indptr_c = indptr.contiguous();
  const at::Tensor indices_c = indices.contiguous();
  const int64_t num_rows = indptr.numel() - 1;
  at::Tensor out = at::empty({indices.numel()}, a.options());
  if (num_rows == 0 || indices.numel() == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, a.scalar_type(), "sddmm_cuda", [&] {
    AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "sddmm_cuda", [&] {
      sddmm_kernel<scalar_t, index_t>
          <<<warp_row_blocks(num_rows, 1), warp_row_threads(), 0, current_stream()>>>(
              indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(), a_c.data_ptr<scalar_t>(),
              b_c.data_ptr<scalar_t>(), num_rows, a.size(1), out.data_ptr<scalar_t>());
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  });
  return out;
}

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("spmm", &spmm_entry<CudaSpmm>);
  m.impl("spmm_max", &spmm_max_entry<CudaSpmm>);
  m.impl("es_spmm", &es_spmm_entry<CudaSpmm>);
  m.impl("sddmm", &sddmm_cuda);
}

}  // namespace fastgl::aggregate
