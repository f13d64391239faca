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
__global__ void edge_softmax_kernel(SoftmaxRows rows, const scalar_t* scores, scalar_t* out) {
  for (int64_t i = global_thread_index(); i < rows.num_rows * rows.heads;
       i += global_thread_stride()) {
    const int64_t row = i / rows.heads;
    softmax_segment(scores, out, rows.row_start[row], rows.row_start[row + 1], rows.heads,
                    i % rows.heads);
  }
}

template <typename scalar_t>
__global__ void edge_softmax_backward_kernel(SoftmaxRows rows, const scalar_t* out,
                                             const scalar_t* grad, scalar_t* grad_scores) {
  for (int64_t i = global_thread_index(); i < rows.num_rows * rows.heads;
       i += global_thread_stride()) {
    const int64_t row = i / rows.heads;
    softmax_backward_segment(out, grad, grad_scores, rows.row_start[row], rows.row_start[row + 1],
                             rows.heads, i % rows.heads);
  }
}

struct CudaEdgeSoftmax {
  template <typename scalar_t>
  static void forward(const SoftmaxRows& rows, const scalar_t* scores, scalar_t* out) {
    edge_softmax_kernel<<<blocks_for(rows.num_rows * rows.heads), kThreadsPerBlock, 0,
                          fastgl::cuda::current_stream()>>>(rows, scores, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  template <typename scalar_t>
  static void backward(const SoftmaxRows& rows, const scalar_t* out, const scalar_t* grad,
                       scalar_t* grad_scores) {
    edge_softmax_backward_kernel<<<blocks_for(rows.num_rows * rows.heads), kThreadsPerBlock, 0,
                                   fastgl::cuda::current_stream()>>>(rows, out, grad, grad_scores);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("edge_softmax", &edge_softmax_entry<CudaEdgeSoftmax>);
  m.impl("edge_softmax_backward", &edge_softmax_backward_entry<CudaEdgeSoftmax>);
}

}  // namespace fastgl::aggregate
