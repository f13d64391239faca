// CUDA edge_softmax forward/backward: one thread per (destination, head) over edge_softmax.h,
// so results equal the CPU reference's up to exp() rounding.
#include "aggregate/edge_softmax.h"
#include "common/cuda_utils.cuh"

#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

template <typename scalar_t>
__global__ void edge_softmax_kernel(const int64_t* row_start, int64_t num_rows, int64_t heads,
                                    const scalar_t* scores, scalar_t* out) {
  for (int64_t i = global_thread_index(); i < num_rows * heads; i += global_thread_stride()) {
    const int64_t row = i / heads;
    softmax_segment(scores, out, row_start[row], row_start[row + 1], heads, i % heads);
  }
}

template <typename scalar_t>
__global__ void edge_softmax_backward_kernel(const int64_t* row_start, int64_t num_rows,
                                             int64_t heads, const scalar_t* out,
                                             const scalar_t* grad, scalar_t* grad_scores) {
  for (int64_t i = global_thread_index(); i < num_rows * heads; i += global_thread_stride()) {
    const int64_t row = i / heads;
    softmax_backward_segment(out, grad, grad_scores, row_start[row], row_start[row + 1], heads,
                             i % heads);
  }
}

}  // namespace

at::Tensor edge_softmax_cuda(const at::Tensor& indptr, const at::Tensor& scores) {
  check_edge_softmax_inputs("edge_softmax", indptr, scores);
  const c10::cuda::CUDAGuard device_guard(scores.device());
  const at::Tensor scores_c = scores.contiguous(), indptr_c = indptr.contiguous();
  at::Tensor out = at::empty_like(scores_c);
  const int64_t num_rows = indptr.numel() - 1, heads = scores.size(1);
  if (num_rows * heads == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, scores.scalar_type(), "edge_softmax_cuda", [&] {
        edge_softmax_kernel<scalar_t>
            <<<blocks_for(num_rows * heads), kThreadsPerBlock, 0, fastgl::cuda::current_stream()>>>(
                indptr_c.data_ptr<int64_t>(), num_rows, heads, scores_c.data_ptr<scalar_t>(),
                out.data_ptr<scalar_t>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
  return out;
}

at::Tensor edge_softmax_backward_cuda(const at::Tensor& indptr, const at::Tensor& out,
                                      const at::Tensor& grad) {
  check_edge_softmax_backward_inputs(indptr, out, grad);
  const c10::cuda::CUDAGuard device_guard(out.device());
  const at::Tensor out_c = out.contiguous(), grad_c = grad.contiguous();
  const at::Tensor indptr_c = indptr.contiguous();
  at::Tensor grad_scores = at::empty_like(out_c);
  const int64_t num_rows = indptr.numel() - 1, heads = out.size(1);
  if (num_rows * heads == 0) return grad_scores;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, out.scalar_type(), "edge_softmax_backward_cuda", [&] {
        edge_softmax_backward_kernel<scalar_t>
            <<<blocks_for(num_rows * heads), kThreadsPerBlock, 0, fastgl::cuda::current_stream()>>>(
                indptr_c.data_ptr<int64_t>(), num_rows, heads, out_c.data_ptr<scalar_t>(),
                grad_c.data_ptr<scalar_t>(), grad_scores.data_ptr<scalar_t>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
  return grad_scores;
}

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("edge_softmax", &edge_softmax_cuda);
  m.impl("edge_softmax_backward", &edge_softmax_backward_cuda);
}

}  // namespace fastgl::aggregate
