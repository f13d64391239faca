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
__global__ void max_backward_x_kernel(const int64_t* start, const index_t* rows,
                                      const int64_t* slots, const scalar_t* weight,
                                      const int64_t* winner, const scalar_t* grad, int64_t num_src,
                                      int64_t dim, scalar_t* grad_x) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t s = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (s >= num_src) return;
  for (int64_t f = static_cast<int64_t>(blockIdx.y) * kWarp + threadIdx.x; f < dim;
       f += static_cast<int64_t>(gridDim.y) * kWarp) {
    acc_t acc = 0;
    for (int64_t j = start[s]; j < start[s + 1]; ++j) {
      const int64_t r = static_cast<int64_t>(rows[j]), e = slots[j];
      if (winner[r * dim + f] == e) {
        acc += (weight ? static_cast<acc_t>(weight[e]) : acc_t(1)) *
               static_cast<acc_t>(grad[r * dim + f]);
      }
    }
    grad_x[s * dim + f] = static_cast<scalar_t>(acc);
  }
}

// Per edge of the row, the lanes sum the terms of the features it won, then reduce.
template <typename scalar_t, typename index_t>
__global__ void max_backward_weight_kernel(const int64_t* start, const index_t* column,
                                           const scalar_t* x, const int64_t* winner,
                                           const scalar_t* grad, int64_t num_rows, int64_t dim,
                                           scalar_t* grad_weight) {
  using acc_t = at::opmath_type<scalar_t>;
  const int lane = threadIdx.x;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (r >= num_rows) return;
  for (int64_t e = start[r]; e < start[r + 1]; ++e) {
    const int64_t source = static_cast<int64_t>(column[e]);
    acc_t sum = 0;
    for (int64_t f = lane; f < dim; f += kWarp) {
      if (winner[r * dim + f] == e) {
        sum += static_cast<acc_t>(grad[r * dim + f]) * static_cast<acc_t>(x[source * dim + f]);
      }
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (lane == 0) grad_weight[e] = static_cast<scalar_t>(sum);
  }
}

}  // namespace

at::Tensor spmm_max_backward_x_cuda(const at::Tensor& t_indptr, const at::Tensor& t_rows,
                                    const at::Tensor& t_slots,
                                    const c10::optional<at::Tensor>& weight, const at::Tensor& arg,
                                    const at::Tensor& grad) {
  check_spmm_max_backward_x_inputs(t_indptr, t_rows, t_slots, weight, arg, grad);
  const c10::cuda::CUDAGuard device_guard(grad.device());
  const at::Tensor t_indptr_c = t_indptr.contiguous(), t_rows_c = t_rows.contiguous();
  const at::Tensor t_slots_c = t_slots.contiguous(), arg_c = arg.contiguous();
  const at::Tensor grad_c = grad.contiguous();
  const at::Tensor weight_c = weight.has_value() ? weight->contiguous() : at::Tensor();
  const int64_t num_src = t_indptr.numel() - 1, dim = grad.size(1);
  at::Tensor grad_x = at::empty({num_src, dim}, grad.options());
  if (num_src == 0 || dim == 0) return grad_x;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_x_cuda", [&] {
        AT_DISPATCH_INDEX_TYPES(t_rows.scalar_type(), "spmm_max_backward_x_cuda", [&] {
          const scalar_t* w = weight_c.defined() ? weight_c.data_ptr<scalar_t>() : nullptr;
          max_backward_x_kernel<scalar_t, index_t>
              <<<warp_row_blocks(num_src, dim), warp_row_threads(), 0, current_stream()>>>(
                  t_indptr_c.data_ptr<int64_t>(), t_rows_c.data_ptr<index_t>(),
                  t_slots_c.data_ptr<int64_t>(), w, arg_c.data_ptr<int64_t>(),
                  grad_c.data_ptr<scalar_t>(), num_src, dim, grad_x.data_ptr<scalar_t>());
          C10_CUDA_KERNEL_LAUNCH_CHECK();
        });
      });
  return grad_x;
}

at::Tensor spmm_max_backward_weight_cuda(const at::Tensor& indptr, const at::Tensor& indices,
                                         const at::Tensor& x, const at::Tensor& arg,
                                         const at::Tensor& grad) {
  check_spmm_max_backward_weight_inputs(indptr, indices, x, arg, grad);
  const c10::cuda::CUDAGuard device_guard(grad.device());
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor x_c = x.contiguous(), arg_c = arg.contiguous(), grad_c = grad.contiguous();
  const int64_t num_rows = indptr.numel() - 1;
  at::Tensor grad_weight = at::empty({indices.numel()}, grad.options());
  if (num_rows == 0 || indices.numel() == 0) return grad_weight;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_weight_cuda", [&] {
        AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "spmm_max_backward_weight_cuda", [&] {
          max_backward_weight_kernel<scalar_t, index_t>
              <<<warp_row_blocks(num_rows, 1), warp_row_threads(), 0, current_stream()>>>(
                  indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(),
                  x_c.data_ptr<scalar_t>(), arg_c.data_ptr<int64_t>(), grad_c.data_ptr<scalar_t>(),
                  num_rows, grad.size(1), grad_weight.data_ptr<scalar_t>());
          C10_CUDA_KERNEL_LAUNCH_CHECK();
        });
      });
  return grad_weight;
}

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("spmm_max_backward_x", &spmm_max_backward_x_cuda);
  m.impl("spmm_max_backward_weight", &spmm_max_backward_weight_cuda);
}

}  // namespace fastgl::aggregate
